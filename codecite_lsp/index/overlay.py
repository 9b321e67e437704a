"""Which of a base's files a reader may see: only those whose working-tree content is the content
the base indexed (same path, same sha256). Every other base file is masked: edited, deleted,
renamed, now ignored, or changed by a local commit. Its rows are never returned, and the local
index (the overlay) holds its current content if it still has any.

The same object tells the indexer what to leave out of the overlay (a file equal to the base's)
and the layered reads what to hide, so within a process both agree after every save; another
process builds its own from the working tree when it opens the base. A file found equal is
remembered by its stat (size, mtime, ctime) in the index folder, so the next process reads only
the files whose stat changed, not every base file (~0.1 s per 100 MB; seconds on a monorepo,
for each `codecite search`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.files import LARGE_FILE_BYTES, read_regular
from ..core.records import file_revision

if TYPE_CHECKING:
    from ..ingest.scan import WorkspaceFile


# A file written this recently may still change within its mtime's tick: hashed, not remembered.
_SETTLED_SECONDS = 2.0

Stat = tuple[int, int, int]  # size, mtime_ns, ctime_ns


class Overlay:
    """The base's files and which of them the working tree still holds unchanged."""

    def __init__(
        self, repo: Path, base_files: Mapping[str, str], remembered: Path | None = None
    ) -> None:
        self.repo = repo
        self._base = dict(base_files)  # path -> content hash, as the base indexed it
        self._same: set[str] = set()
        # path -> its stat when it was last hashed and found the base's: a later pass over an
        # unchanged file does not read it again (like the indexer's stat shortcut), nor does the
        # next process (``remembered``: a file of the index folder, for this base's files only).
        self._remembered = remembered
        self._key = hashlib.sha256(json.dumps(self._base, sort_keys=True).encode()).hexdigest()
        self._hashed: dict[str, Stat] = self._recalled()
        self._saved = dict(self._hashed)
        self._lock = threading.Lock()
        self.generation = 0  # bumped whenever what is visible changes (caches keyed on it)

    def same(self, path: str) -> bool:
        """Whether the base's rows of ``path`` are the working tree's (visible)."""
        return path in self._same

    def refresh(self, listed: Iterable[WorkspaceFile]) -> None:
        """Recompute from the files a scan listed (a file not listed is masked)."""
        same = {f.path for f in listed if self._unchanged(f) or self._matches(f.path)}
        with self._lock:
            self._hashed = {p: s for p, s in self._hashed.items() if p in same}
            if same != self._same:
                self._same = same
                self.generation += 1
            hashed = dict(self._hashed)
        if hashed != self._saved:
            self._remember(hashed)

    def recheck(self, paths: Iterable[str], listed: Iterable[str]) -> None:
        """After a save or a watcher batch: ``paths`` changed; those of them a scan would still
        list are ``listed``."""
        present = set(listed)
        with self._lock:
            before = set(self._same)
            for path in paths:
                self._hashed.pop(path, None)
                if path in present and self._matches(path):
                    self._same.add(path)
                else:
                    self._same.discard(path)
            if before != self._same:
                self.generation += 1

    def masked(self) -> int:
        """How many of the base's files are hidden."""
        return len(self._base) - len(self._same)

    def masked_share(self) -> float:
        """The hidden files' share of the base's files (0 for a base of none)."""
        return self.masked() / len(self._base) if self._base else 0.0

    def _unchanged(self, found: WorkspaceFile) -> bool:
        return self._hashed.get(found.path) == (found.size, found.mtime_ns, found.ctime_ns)

    def _matches(self, path: str) -> bool:
        expected = self._base.get(path)
        if expected is None:
            return False
        try:
            data, stat = read_regular(self.repo / path, LARGE_FILE_BYTES)
        except OSError:  # gone, or no longer a regular file: not the base's
            return False
        if file_revision(data) != expected:
            return False
        if time.time() - stat.st_mtime > _SETTLED_SECONDS:
            self._hashed[path] = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
        return True

    def _recalled(self) -> dict[str, Stat]:
        """The stats remembered for this base's files (none for another base, or unreadable)."""
        if self._remembered is None:
            return {}
        try:
            kept = json.loads(read_regular(self._remembered)[0].decode("utf-8"))
            if kept.get("base") != self._key:
                return {}
            return {
                path: (int(stat[0]), int(stat[1]), int(stat[2]))
                for path, stat in kept["hashed"].items()
                if path in self._base
            }
        except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
            return {}  # a cache: what it cannot say is hashed again

    def _remember(self, hashed: dict[str, Stat]) -> None:
        if self._remembered is None:
            return
        temp = self._remembered.with_name(f".{self._remembered.name}.{os.getpid()}")
        try:
            temp.parent.mkdir(parents=True, exist_ok=True)
            temp.write_text(json.dumps({"base": self._key, "hashed": hashed}), encoding="utf-8")
            os.replace(temp, self._remembered)
            self._saved = hashed
        except OSError:  # a read-only index folder: the next process hashes again
            temp.unlink(missing_ok=True)
