"""Everything one workspace root needs, without any LSP in it: configuration, index, watcher,
retriever, answerer and the hover cache. The server calls these methods from worker threads.

Heavy parts (lancedb via the indexer/retriever, litellm via the answerer) are built lazily on
first use, so creating a Session costs only reading the config files.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.config import load_config_lenient

if TYPE_CHECKING:
    from ..answer.hover import AskModel
    from ..answer.pipeline import Answerer
    from ..answer.retrieval import Retriever
    from ..index.indexer import Indexer
    from ..index.watcher import Watcher
    from ..ingest.chunking import Encoding

log = logging.getLogger("codecite_lsp")

# Settings whose change invalidates what is on disk: the index must be rebuilt or re-opened.
_INDEX_KEYS = ("index_dir", "embedding", "chunk_budget", "max_file_bytes", "max_line_length")
UPKEEP_AFTER_IDLE_SECONDS = 30.0
REASON_PRIVATE_CITATION = "not an indexed file (ignored or secret)"

ProgressFn = Callable[[int, int, str], None]
TextReader = Callable[[Path], "str | None"]


class SessionError(ValueError):
    """The request names something this root does not have (bad path, unknown file)."""


class Cancelled(Exception):
    """The client cancelled the request; raised between steps of the work."""


def check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled()


class Session:
    def __init__(
        self,
        root: Path,
        settings: Mapping[str, Any],
    ) -> None:
        self.root = root
        self.config, self.problems = load_config_lenient(root, settings)
        self.index_dir = self.config.resolved_index_dir(root)
        self._lazy = threading.RLock()  # builds the heavy parts once
        self._indexer: Indexer | None = None
        self._retriever: Retriever | None = None
        self._answerer: Answerer | None = None
        self._watcher: Watcher | None = None
        self._upkeep: threading.Timer | None = None
        self._hovers: dict[tuple[str, tuple[str, ...]], str | None] = {}
        self.indexing = False
        self._log_file = _attach_log_file(self.index_dir)

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

    # -- index ------------------------------------------------------------------------------

    def index(self, progress: ProgressFn, cancel: threading.Event) -> str:
        """Build or update the whole index; the summary line is returned for the progress end."""
        self.indexing = True
        try:
            report = self.indexer.run(progress=progress, cancel=cancel)
            self._changed()
        finally:
            self.indexing = False
            _release_memory()
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
        self._changed()
        self._schedule_upkeep()
        log.info("updated %s: %s", paths, report.summary())

    def _changed(self) -> None:
        self._hovers.clear()

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

    # -- features ---------------------------------------------------------------------------

    def hover(
        self,
        path: Path,
        text: str,
        line: int,
        character: int,
        *,
        encoding: Encoding = "utf-16",
        cancel: threading.Event,
    ) -> str | None:
        from ..answer.hover import command_link, explain_symbol
        from ..ingest.chunking import symbol_at

        rel = self.relative(path)
        if self._private(rel):
            return None  # the word under the cursor may be the secret itself
        at = symbol_at(rel, text, line, character, encoding=encoding)
        if at is None or _is_credential(at.name):
            return None  # a key typed in an unsaved buffer must not reach retrieval or a model
        symbol = at.name
        check(cancel)
        found = self.retriever.retrieve_for_symbol(symbol, rel)
        check(cancel)
        key = (symbol, tuple(result.content_hash for result in found.selected))
        if key not in self._hovers:
            self._hovers[key] = explain_symbol(
                symbol,
                found,
                functools.partial(command_link, root=self.root),
                note=self.index_note(),
                cancel=cancel,
                ask_model=self._hover_model(rel, symbol),
                model_wait=self.config.hover_timeout,
            )
        return self._hovers[key]

    def _hover_model(self, rel: str, symbol: str) -> AskModel | None:
        """The configured model answers hovers through the full pipeline (gate, retry)."""
        if self.config.model == "extractive":
            return None
        context = {"path": rel, "symbol": symbol}
        return lambda question, cancel: self.answerer.ask(question, context, cancel)

    def ask(
        self,
        question: str,
        path: Path | None,
        text: str | None,
        position: tuple[int, int] | None,
        *,
        encoding: Encoding = "utf-16",
        cancel: threading.Event,
    ) -> dict[str, Any]:
        """The answer JSON; the current file and the symbol at the cursor boost retrieval."""
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
            if text is not None and position is not None and not self._private(context["path"]):
                from ..ingest.chunking import symbol_at

                at = symbol_at(context["path"], text, *position, encoding=encoding)
                if at is not None and not _is_credential(at.enclosing or at.name):
                    context["symbol"] = at.enclosing or at.name
        answer = self.answerer.ask(
            question, context=context or None, cancel=cancel, index_note=self.index_note()
        )
        result: dict[str, Any] = answer.model_dump(mode="json")
        return result

    def search(self, query: str, limit: int, *, cancel: threading.Event) -> list[dict[str, Any]]:
        return [result.to_json() for result in self.retriever.search(query, limit=limit)]

    def history(
        self, limit: int, read: TextReader, *, cancel: threading.Event
    ) -> list[dict[str, Any]]:
        """Past answers, every citation re-resolved against what the user sees now."""
        from ..answer.history import History

        @functools.cache  # each file read once per request
        def read_rel(rel: str) -> str | None:
            return read(self.absolute(rel))

        records: list[dict[str, Any]] = []
        for item in History(self.index_dir).resolved(self.root, read_rel, limit):
            check(cancel)
            record: dict[str, Any] = item.entry.model_dump(mode="json")
            record["root"] = str(self.root)
            record["citations"] = [
                {
                    "citation": one.citation.model_dump(mode="json"),
                    "resolution": _with_lines(
                        one.resolution.model_dump(mode="json"), read_rel(one.citation.path)
                    ),
                }
                for one in item.citations
            ]
            records.append(record)
        return records

    def resolve(
        self,
        citation: Mapping[str, Any],
        read_current: Callable[[], str | None],
        *,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        """Where a citation's lines are now (exact / moved / stale / gone), with those lines.

        A private path (secret or git-ignored) is gone without being read: a forged or old
        citation must not get the editor to open ``.env``."""
        from pydantic import ValidationError

        from ..answer.citations import resolve
        from ..core.answers import Citation, Gone  # pydantic: kept off the start-up path

        try:
            parsed = Citation.model_validate(
                {key: value for key, value in citation.items() if key in Citation.model_fields}
            )
        except ValidationError as exc:
            raise SessionError(f"not a citation: {_first_error(exc)}") from None
        if self._private(parsed.path):
            return Gone(path=parsed.path, reason=REASON_PRIVATE_CITATION).model_dump(mode="json")
        current_text = read_current()
        return _with_lines(resolve(parsed, current_text).model_dump(mode="json"), current_text)

    def status(self) -> dict[str, Any]:
        """codecite/status for this root; before the first index pass, zeros."""
        counts: dict[str, Any] = {}
        try:
            counts = dict(self._indexer.status()) if self._indexer else {}
        except Exception as exc:  # a broken index must not hide the rest of the status
            log.warning("index status unavailable: %s", exc)
            counts = {"error": str(exc)}
        return {
            "root": str(self.root),
            "files_indexed": counts.get("files_indexed", 0),
            "chunks": counts.get("chunks", 0),
            "pending": counts.get("pending", 0),
            "indexing": self.indexing,
            "last_update": counts.get("last_update"),
            "embedder": counts.get("embedder", {"name": self.config.embedding, "state": "idle"}),
            "error": counts.get("error"),
        }

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
            self._hovers.clear()
            if reindex:
                self._indexer = self._retriever = None
                self._log_file = _attach_log_file(self.index_dir)
        return reindex

    def _private(self, rel: str) -> bool:
        """A secret or a git-ignored file (``app.log``, ``local_settings.py``): not even the word
        under the cursor may reach retrieval, history or the model's prompt."""
        from ..ingest.scan import IgnoreRules  # loaded per request: .gitignore may have changed

        return IgnoreRules.load(self.root, index_dir=self.index_dir).is_ignored(rel)

    def relative(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            raise SessionError(f"{path} is not inside {self.root}") from None

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
        if self._log_file is not None:
            log.removeHandler(self._log_file)
            self._log_file.close()
            self._log_file = None


def _with_lines(resolution: dict[str, Any], text: str | None) -> dict[str, Any]:
    """Add the cited lines as they read now, so the client can show them without a file read."""
    if text is not None and resolution["state"] in ("exact", "moved"):
        lines = text.splitlines()
        resolution["lines"] = lines[resolution["start_line"] - 1 : resolution["end_line"]]
    return resolution


def _first_error(exc: Any) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}"


def _is_credential(word: str) -> bool:
    from ..ingest.secrets import find_credential

    return find_credential(word) is not None


def _attach_log_file(index_dir: Path) -> logging.Handler | None:
    """Errors of every feature also go to <index_dir>/server.log, for bug reports."""
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(index_dir / "server.log", encoding="utf-8")
    except OSError:
        return None
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    return handler


def _release_memory() -> None:
    """Give the memory a whole-index pass freed back to the system: the server lives as long as
    the editor, and the allocators keep freed pages (~150 MB after the stdlib's index)."""
    import contextlib
    import ctypes
    import gc

    import pyarrow as pa

    gc.collect()
    pa.default_memory_pool().release_unused()
    with contextlib.suppress(AttributeError, OSError):  # glibc only; others have no such call
        ctypes.CDLL(None).malloc_trim(0)
