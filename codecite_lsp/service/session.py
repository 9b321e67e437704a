"""Everything one workspace root needs, without any LSP in it: the configuration and the parts
built from it (indexer, retriever, answerer, watcher, upkeep timer), and the per-root operations
the features (and the MCP server) call from worker threads: ``ask``, ``search``, ``status``,
``resolve``. JSON shapes live in shaping.py, privacy rules in privacy.py, the log file in
logfile.py; hover and history are in features/.

Heavy parts (lancedb via the indexer/retriever, litellm via the answerer) are built lazily on
first use, so creating a Session costs only reading the config files.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.config import load_config_lenient
from ..ingest.paths import repo_relative
from . import logfile, memory, shaping

if TYPE_CHECKING:
    from ..answer.followup import Turn
    from ..answer.pipeline import Answerer
    from ..answer.retrieval import Retriever
    from ..index.indexer import Indexer
    from ..index.watcher import Watcher
    from ..ingest.scan import Skip
    from ..ingest.symbols import Encoding
    from .privacy import Privacy

log = logging.getLogger("codecite_lsp")

# Settings whose change invalidates what is on disk: the index must be rebuilt or re-opened.
_INDEX_KEYS = ("index_dir", "embedding", "chunk_budget", "max_file_bytes", "max_line_length")
UPKEEP_AFTER_IDLE_SECONDS = 30.0

ProgressFn = Callable[[int, int, str], None]


class SessionError(ValueError):
    """The request names something this root does not have (bad path, unknown file)."""


class Cancelled(Exception):
    """The client cancelled the request; raised between steps of the work."""


def check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled()


class Session:
    def __init__(self, root: Path, settings: Mapping[str, Any]) -> None:
        self.root = root
        self.config, self.problems = load_config_lenient(root, settings)
        self.index_dir = self.config.resolved_index_dir(root)
        self._lazy = threading.RLock()  # builds the heavy parts once
        self._indexer: Indexer | None = None
        self._retriever: Retriever | None = None
        self._answerer: Answerer | None = None
        self._watcher: Watcher | None = None
        self._upkeep: threading.Timer | None = None
        # Hover markdown by (symbol, hashes of the chunks it was explained from): cleared on change.
        self.hovers: dict[tuple[str, tuple[str, ...]], str | None] = {}
        self.indexing = False
        self.skipped: list[Skip] = []  # the last full pass's skipped files, with reasons
        self._log_file = logfile.attach(self.index_dir)

    # -- heavy parts, built on first use ----------------------------------------------------

    @property
    def indexer(self) -> Indexer:
        with self._lazy:
            if self._indexer is None:
                from ..index.indexer import Indexer

                self._indexer = Indexer(self.root, self.config)
            return self._indexer

    @property
    def retriever(self) -> Retriever:
        with self._lazy:
            if self._retriever is None:
                from ..answer.retrieval import open_retriever

                self._retriever = open_retriever(self.root, self.config)
            return self._retriever

    @property
    def answerer(self) -> Answerer:
        with self._lazy:
            if self._answerer is None:
                from ..answer.pipeline import Answerer

                self._answerer = Answerer(self.root, self.config)
            return self._answerer

    def privacy(self) -> Privacy:
        from .privacy import Privacy  # the ignore rules: kept off the start-up path

        return Privacy(self.root, self.index_dir, self.config)

    # -- index ------------------------------------------------------------------------------

    def index(self, progress: ProgressFn, cancel: threading.Event) -> str:
        """Build or update the whole index; the summary line is returned for the progress end."""
        self.indexing = True
        try:
            report = self.indexer.run(progress=progress, cancel=cancel)
            self.skipped = list(report.skipped)
            for skip in self.skipped:
                log.info("%s: skipped %s: %s", self.root.name, skip.path, skip.reason)
            self.hovers.clear()
        finally:
            self.indexing = False
            memory.release()
        return str(report.summary())

    def watch(self) -> None:
        """Keep the index current with edits made outside the editor (idempotent)."""
        with self._lazy:
            if self._watcher is not None:
                return
            from ..index.watcher import Watcher
            from ..ingest.ignore import IgnoreRules

            self._watcher = Watcher(
                self.root,
                self.update,
                debounce_ms=self.config.debounce_ms,
                rules=IgnoreRules.load(self.root, index_dir=self.index_dir),
            )
            self._watcher.start()

    def saved(self, path: Path) -> None:
        """didSave: index the file now rather than after the watcher's debounce (the save is
        final, and 200 ms of debounce would spend most of the 300 ms a user waits)."""
        self.update([self.relative(path)])

    def update(self, paths: Iterable[str]) -> None:
        """Re-index changed files (watcher batches and saves)."""
        report = self.indexer.update_paths(paths)
        # A file skipped on a save (the parser crashed on it) is listed until the next full pass.
        fresh = {skip.path for skip in report.skipped}
        self.skipped = [s for s in self.skipped if s.path not in fresh] + report.skipped
        self.hovers.clear()
        self._schedule_upkeep()
        log.info("updated %s: %s", paths, report.summary())

    def _schedule_upkeep(self) -> None:
        """Once edits pause, fold the rows that saves added into the search indexes.

        optimize() takes seconds, so it never runs on a save's path; until it runs, saved rows
        are still found (searched without the index, slower as they pile up).
        """
        with self._lazy:
            if self._upkeep is not None:
                self._upkeep.cancel()
            self._upkeep = threading.Timer(UPKEEP_AFTER_IDLE_SECONDS, self._run_upkeep)
            self._upkeep.daemon = True
            self._upkeep.start()

    def _run_upkeep(self) -> None:
        try:
            self.indexer.optimize_if_due()
        except Exception:  # upkeep is an optimisation: its failure must not reach the user
            log.exception("index upkeep failed")

    def index_note(self) -> str | None:
        pending = self.pending()
        if self.indexing or pending:
            # while the pass is still scanning, nothing is known to be pending yet
            count = f": {pending} files pending" if pending else ""
            return f"indexing is still running{count}"
        return None

    def pending(self) -> int:
        return len(self.indexer.pending) if self._indexer is not None else 0

    # -- operations -------------------------------------------------------------------------

    def ask(
        self,
        question: str,
        path: Path | None,
        text: str | None,
        position: tuple[int, int] | None,
        *,
        encoding: Encoding = "utf-16",
        cancel: threading.Event,
        history: Sequence[Turn] = (),
        stage: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        """The answer JSON; the current file and the symbol at the cursor boost retrieval.
        ``text`` may be a region of the file, with ``position`` relative to it; ``history`` is
        the conversation a follow-up continues; ``stage`` hears each step as it starts."""
        from ..core.answers import Refused

        context: dict[str, Any] = {}
        if path is not None:
            context["path"] = self.relative(path)
            if context["path"] in self.indexer.pending:
                refused = Refused(
                    reason="stale_index",
                    detail=f"{context['path']} is not indexed yet ({self.index_note()})",
                )
                return refused.model_dump(mode="json")
            private = self.privacy().path_refusal(context["path"]) is not None
            if text is not None and position is not None and not private:
                from ..ingest.workers import SymbolQuery, symbol_isolated

                query = SymbolQuery(context["path"], text, *position, encoding)
                at = symbol_isolated(query)  # parsed in a worker: the buffer may crash it
                if at is not None and not is_credential(at.enclosing or at.name):
                    context["symbol"] = at.enclosing or at.name
        answer = self.answerer.ask(
            question,
            context=context or None,
            cancel=cancel,
            index_note=self.index_note(),
            history=history,
            stage=stage,
        )
        result: dict[str, Any] = answer.model_dump(mode="json")
        return result

    def search(self, query: str, limit: int, *, cancel: threading.Event) -> list[dict[str, Any]]:
        """Search results, less any file that became private since it was indexed."""
        privacy = self.privacy()
        results = self.retriever.search(query, limit=limit)
        return [r.to_json() for r in results if privacy.path_refusal(r.path) is None]

    def resolve(
        self,
        citation: Mapping[str, Any],
        read_current: Callable[[], str | None],
        *,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        """Where a citation's lines are now (exact / moved / stale / gone), with those lines.

        A private file (secret, git-ignored, holding a credential, or reached through a symlink
        to one) is gone without being read: a forged or old citation must not open ``.env``."""
        from pydantic import ValidationError

        from ..answer.citations import resolve
        from ..core.answers import Citation, Gone  # pydantic: kept off the start-up path

        try:
            parsed = Citation.model_validate(
                {key: value for key, value in citation.items() if key in Citation.model_fields}
            )
        except ValidationError as exc:
            raise SessionError(f"not a citation: {shaping.first_error(exc)}") from None
        self.absolute(parsed.path)  # refuses a path outside the root
        why = self.privacy().file_refusal(parsed.path)
        if why is not None:
            return Gone(path=parsed.path, reason=why).model_dump(mode="json")
        current_text = read_current()
        resolution = resolve(parsed, current_text).model_dump(mode="json")
        return shaping.with_lines(resolution, current_text)

    def status(self) -> dict[str, Any]:
        """codecite/status for this root; before this process's first pass, the index on disk."""
        counts: dict[str, Any] = {}
        try:
            counts = dict(self.indexer.status())  # before the first pass: what meta.json says
        except Exception as exc:  # a broken index must not hide the rest of the status
            log.warning("index status unavailable: %s", exc)
            counts = {"error": str(exc)}
        return shaping.status(
            self.root,
            counts,
            indexing=self.indexing,
            embedding=self.config.embedding,
            skipped=self.skipped,
            index_dir=self.index_dir,
        )

    # -- configuration and paths ------------------------------------------------------------

    def reconfigure(self, settings: Mapping[str, Any]) -> bool:
        """Apply new settings; True when the index must be rebuilt (index-shaping keys changed)."""
        config, self.problems = load_config_lenient(self.root, settings)
        if config == self.config:
            return False
        reindex = any(getattr(config, key) != getattr(self.config, key) for key in _INDEX_KEYS)
        if reindex:
            self.close()
        with self._lazy:
            self.config = config
            self.index_dir = config.resolved_index_dir(self.root)
            self._answerer = None
            self.hovers.clear()
            if reindex:
                self._indexer = self._retriever = None
                self._log_file = logfile.attach(self.index_dir)
        return reindex

    def relative(self, path: Path) -> str:
        rel = repo_relative(str(path.resolve()), [str(self.root)])
        if rel is None:
            raise SessionError(f"{path} is not inside {self.root}")
        return rel

    def absolute(self, rel: str) -> Path:
        path = (self.root / rel).resolve()
        if path != self.root and self.root not in path.parents:
            raise SessionError(f"{rel!r} is outside the workspace folder {self.root}")
        return path

    def close(self) -> None:
        with self._lazy:
            if self._watcher is not None:
                self._watcher.stop()
                self._watcher = None
            if self._upkeep is not None:
                self._upkeep.cancel()
                self._upkeep = None
        logfile.detach(self._log_file)
        self._log_file = None


def is_credential(word: str) -> bool:
    from ..ingest.secrets import find_credential

    return find_credential(word) is not None
