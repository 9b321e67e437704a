"""One root's index kept current: the full pass, the watcher, saves, the search-index upkeep
after edits pause, and what a request is told while files are still pending.

The indexer is built on first use (it opens lancedb); Session builds an Upkeep, re-points it when
settings change and closes it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import memory
from .request_paths import relative

if TYPE_CHECKING:
    from ..core.config import Config
    from ..index.indexer import Indexer
    from ..index.watcher import Watcher
    from ..ingest.scan import Skip

log = logging.getLogger("codecite_lsp")

UPKEEP_AFTER_IDLE_SECONDS = 30.0

ProgressFn = Callable[[int, int, str], None]


class Upkeep:
    def __init__(
        self, root: Path, config: Config, index_dir: Path, changed: Callable[[], None]
    ) -> None:
        self.root = root
        self.config = config
        self.index_dir = index_dir
        self._changed = changed  # told after files were re-indexed (caches keyed on them)
        self._lock = threading.RLock()  # builds the indexer and watcher once; guards the timer
        self._indexer: Indexer | None = None
        self._watcher: Watcher | None = None
        self._timer: threading.Timer | None = None
        self.indexing = False
        self.skipped: list[Skip] = []  # the last full pass's skipped files, with reasons

    @property
    def indexer(self) -> Indexer:
        with self._lock:
            if self._indexer is None:
                from ..index.indexer import Indexer

                self._indexer = Indexer(self.root, self.config)
            return self._indexer

    def configure(self, config: Config, index_dir: Path, *, reopen: bool) -> None:
        """New settings; ``reopen`` when they change what is on disk (the indexer is rebuilt
        on next use, for the new index)."""
        with self._lock:
            self.config = config
            self.index_dir = index_dir
            if reopen:
                self._indexer = None

    def index(self, progress: ProgressFn, cancel: threading.Event) -> str:
        """Build or update the whole index; the summary line is returned for the progress end."""
        self.indexing = True
        try:
            report = self.indexer.run(progress=progress, cancel=cancel)
            self.skipped = list(report.skipped)
            for skip in self.skipped:
                log.info("%s: skipped %s: %s", self.root.name, skip.path, skip.reason)
            self._changed()
        finally:
            self.indexing = False
            memory.release()
        return str(report.summary()) + self._base_note()

    def _base_note(self) -> str:
        """What the progress end says of the ``base`` setting: the base read, or why none."""
        from ..index.base import BaseError, OpenedBase, opened

        found = opened(self.root, self.config, self.index_dir)
        if isinstance(found, BaseError):
            return f" - base {self.config.base} not used: {found}; the local index holds every file"
        if isinstance(found, OpenedBase):
            return f" - over the base of {found.manifest.commit[:12]}" + (
                f" ({found.note})" if found.note else ""
            )
        return ""

    def watch(self) -> None:
        """Keep the index current with edits made outside the editor (idempotent)."""
        with self._lock:
            if self._watcher is not None:
                return
            from ..index.watcher import Watcher
            from ..ingest.ignore import IgnoreRules

            self._watcher = Watcher(
                self.root,
                self.update,
                debounce_ms=self.config.debounce_ms,
                rules=IgnoreRules.load(
                    self.root,
                    index_dir=self.index_dir,
                    trusted=self.config.repository_trusted,
                ),
            )
            self._watcher.start()

    def saved(self, path: Path) -> None:
        """didSave: index the file now rather than after the watcher's debounce (the save is
        final, and 200 ms of debounce would spend most of the 300 ms a user waits)."""
        self.update([relative(self.root, path)])

    def update(self, paths: Iterable[str]) -> None:
        """Re-index changed files (watcher batches and saves)."""
        report = self.indexer.update_paths(paths)
        # A file skipped on a save (the parser crashed on it) is listed until the next full pass.
        fresh = {skip.path for skip in report.skipped}
        self.skipped = [s for s in self.skipped if s.path not in fresh] + report.skipped
        self._changed()
        self._schedule()
        log.info("updated %s: %s", paths, report.summary())

    def _schedule(self) -> None:
        """Once edits pause, fold the rows that saves added into the search indexes.

        optimize() takes seconds, so it never runs on a save's path; until it runs, saved rows
        are still found (searched without the index, slower as they pile up).
        """
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(UPKEEP_AFTER_IDLE_SECONDS, self._optimize)
            self._timer.daemon = True
            self._timer.start()

    def _optimize(self) -> None:
        try:
            self.indexer.optimize_if_due()
        except Exception:  # upkeep is an optimisation: its failure must not reach the user
            log.exception("index upkeep failed")

    def note(self) -> str | None:
        """Why an answer may miss something right now (files not indexed yet), or None."""
        pending = self.pending()
        if self.indexing or pending:
            # while the pass is still scanning, nothing is known to be pending yet
            count = f": {pending} files pending" if pending else ""
            return f"indexing is still running{count}"
        return None

    def pending(self) -> int:
        return len(self.indexer.pending) if self._indexer is not None else 0

    def close(self) -> None:
        """Stop the watcher and the upkeep timer; a later ``watch`` starts a new watcher."""
        with self._lock:
            if self._watcher is not None:
                self._watcher.stop()
                self._watcher = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
