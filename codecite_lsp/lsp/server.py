"""The language server: a thin pygls layer between LSP messages and per-root ``Session`` objects.

Everything slow (lancedb, tree-sitter, litellm, the model) runs in worker threads; the event loop
only parses messages, validates parameters and sends replies, so typing is never blocked.
Messages that worker threads want to send go through ``loop.call_soon_threadsafe``: pygls'
writer is not thread-safe.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from .. import __version__
from ..core.wording import Wording, wording
from .session import Cancelled, Session, SessionError

if TYPE_CHECKING:
    from ..ingest.chunking import Encoding

log = logging.getLogger(__name__)

ASK = "codecite/ask"
SEARCH = "codecite/search"
HISTORY = "codecite/history"
STATUS = "codecite/status"
WORDING = "codecite/wording"
CMD_OPEN = "codecite.openCitation"
CMD_REINDEX = "codecite.reindex"
CMD_ASK = "codecite.ask"

# The answerer cuts long questions (and says so); beyond this the input is not a question at all.
MAX_QUESTION_CHARS = 100_000
MAX_LIMIT = 200

T = TypeVar("T")


class CodeciteProtocol(LanguageServerProtocol):
    """pygls drops a request whose params do not fit the LSP types and never answers it, so the
    client waits forever; answer such a request with InvalidParams saying what is wrong."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" in data and "method" in data and "params" not in data:
            # JSON-RPC lets a request omit params; pygls's generic message type for custom
            # methods requires the field, fails, and the request was never answered.
            data = {**data, "params": None}
        try:
            return super().structure_message(data)
        except JsonRpcInvalidParams as exc:
            if "id" not in data or "method" not in data:
                raise  # a notification: nobody waits for an answer
            why = "; ".join(_readable(exc.__cause__)) or str(exc)
            self._send_response(
                data["id"],
                error=JsonRpcInvalidParams(
                    f"invalid params for {data['method']}: {why}"
                ).to_response_error(),
            )
            return None

    exiting = False

    def handle_message(self, message: Any) -> None:
        if message is None:  # already answered by structure_message
            return
        if getattr(message, "method", None) == types.EXIT:
            self.exiting = True
        super().handle_message(message)

    def _send_data(self, data: Any) -> None:
        # After exit stdout is closed: a progress report still queued by the indexing thread
        # failed, and reporting that failure failed again (megabytes of tracebacks on stderr).
        if not self.exiting:
            super()._send_data(data)


def _readable(error: BaseException | None) -> list[str]:
    from cattrs import transform_error

    if isinstance(error, Exception):
        return list(transform_error(error))
    return []


class CodeciteServer(LanguageServer):
    """Holds one ``Session`` per workspace folder and the settings sent by the client."""

    def __init__(self) -> None:
        super().__init__("codecite-lsp", __version__, protocol_cls=CodeciteProtocol)
        self.sessions: dict[Path, Session] = {}
        self.settings: dict[str, Any] = {}
        # Separate pools: a long index run must never queue a hover behind it.
        self.work = ThreadPoolExecutor(max_workers=4, thread_name_prefix="codecite-work")
        self.indexing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="codecite-index")
        self.loop: asyncio.AbstractEventLoop | None = None
        self.tasks: set[asyncio.Future[None]] = set()
        self.index_runs: set[threading.Event] = set()  # cancel flags of running index passes

    # -- sending from any thread ------------------------------------------------------------

    def soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn`` on the event loop (from a worker thread), or now when already on it."""
        if self.loop is None or _on_loop(self.loop):
            fn(*args)
        else:
            self.loop.call_soon_threadsafe(fn, *args)

    def tell(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        self.soon(self.window_show_message, types.ShowMessageParams(type=kind, message=message))

    def log_to_client(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.soon(self.window_log_message, types.LogMessageParams(type=kind, message=message))

    def report(self, feature: str, exc: BaseException) -> None:
        """One feature failed: log it (file + client) and carry on."""
        log.error("%s failed", feature, exc_info=exc)
        self.log_to_client(f"codecite: {feature} failed: {exc!r}", types.MessageType.Error)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking work in the pool; a cancelled request sets the worker's cancel flag."""
        loop = asyncio.get_running_loop()
        cancel = threading.Event()
        try:
            return await loop.run_in_executor(
                self.work, functools.partial(fn, *args, cancel=cancel)
            )
        except asyncio.CancelledError:  # the thread cannot be stopped: ask it to stop itself
            cancel.set()
            raise

    # -- sessions ----------------------------------------------------------------------------

    def add_root(self, root: Path) -> Session:
        root = root.resolve()
        existing = self.sessions.get(root)
        if existing is not None:
            return existing
        session = Session(root, self.settings)
        self.sessions[root] = session
        for problem in session.problems:
            self.tell(f"codecite ({root.name}): invalid setting ignored: {problem}")
        return session

    def remove_root(self, root: Path) -> None:
        session = self.sessions.pop(root.resolve(), None)
        if session is not None:
            session.close()

    def session_for(self, uri: str) -> Session:
        """The session whose root holds ``uri`` (the deepest root wins for nested folders)."""
        path = uri_to_path(uri)
        owners = [root for root in self.sessions if path == root or root in path.parents]
        if not owners:
            raise JsonRpcInvalidParams(f"{uri} is not inside any workspace folder")
        return self.sessions[max(owners, key=lambda root: len(root.parts))]

    def citation_session(self, root: Any, rel: str) -> Session:
        """Hover links and history entries name their root (a path, or a file URI); citations
        from answers carry only a relative path, so take the first root that has that file."""
        if isinstance(root, str) and root:
            folder = uri_to_path(root) if root.startswith("file:") else Path(root).resolve()
            if folder not in self.sessions:
                raise JsonRpcInvalidParams(f"{root} is not an open workspace folder")
            return self.sessions[folder]
        for session in self.sessions.values():
            if (session.root / rel).is_file():
                return session
        return self.default_session()

    def default_session(self) -> Session:
        if not self.sessions:
            raise JsonRpcInvalidParams("no workspace folder is open")
        return next(iter(self.sessions.values()))

    def encoding(self) -> Encoding:
        """How the client counts characters in positions (negotiated at initialize)."""
        negotiated = self.workspace.position_encoding
        value = getattr(negotiated, "value", negotiated)
        return "utf-8" if value == "utf-8" else "utf-32" if value == "utf-32" else "utf-16"

    def current_text(self, path: Path) -> str | None:
        """The text the user sees: the open buffer if there is one, else the file on disk."""
        document = self.workspace.text_documents.get(path.as_uri())
        if document is not None:
            return document.source
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def start_indexing(self, session: Session) -> None:
        task = asyncio.ensure_future(self._index(session))
        self.tasks.add(task)  # keep a reference: the loop only holds tasks weakly
        task.add_done_callback(self.tasks.discard)

    async def _index(self, session: Session) -> None:
        """Index one root in the background, reported as cancellable work-done progress."""
        token = f"codecite-index-{uuid.uuid4().hex[:8]}"
        cancel = threading.Event()
        self.index_runs.add(cancel)
        progress = self._progress_supported()
        if progress:
            try:
                await self.work_done_progress.create_async(token)
            except Exception as exc:  # the client refused: index without a progress bar
                log.info("progress not available: %s", exc)
                progress = False
        if progress:
            self.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title="codecite: indexing",
                    message=session.root.name,
                    cancellable=True,
                    percentage=0,
                ),
            )
            self.work_done_progress.tokens[token].add_done_callback(lambda _: cancel.set())
        steps = ProgressSteps()

        def on_progress(done: int, total: int, message: str) -> None:
            value = steps.next(done, total, message)
            if progress and value is not None:
                self.soon(self.work_done_progress.report, token, value)

        loop = asyncio.get_running_loop()
        try:  # before the pass, so edits made while it runs are caught too
            await loop.run_in_executor(self.work, session.watch)
        except Exception as exc:  # no live updates, but didSave and requests still work
            self.report("file watcher", exc)
        summary = "cancelled"
        try:
            summary = await loop.run_in_executor(self.indexing, session.index, on_progress, cancel)
        except Exception as exc:
            self.report("indexing", exc)
            summary = f"failed: {exc}"
        finally:
            self.index_runs.discard(cancel)
            if progress:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=summary))
                self.work_done_progress.tokens.pop(token, None)

    async def show_document_async(self, params: types.ShowDocumentParams) -> None:
        window = self.client_capabilities.window
        if window and window.show_document and window.show_document.support:
            await self.window_show_document_async(params)
        else:  # the client cannot open files for us: say where to look
            self.tell(f"codecite: open {params.uri}", types.MessageType.Info)

    def _progress_supported(self) -> bool:
        window = self.client_capabilities.window
        return bool(window and window.work_done_progress)


@dataclass
class ProgressSteps:
    """Turns the indexer's (done, total, message) calls into few, never-falling reports.

    The indexer counts files, then chunks to embed: the second phase restarts at 0, but LSP
    percentages must keep rising, so the bar stays where it is and the message says how far.
    """

    shown: int = -1
    sent_at: float = 0.0
    interval: float = 0.2  # seconds between reports that do not move the bar

    def next(self, done: int, total: int, message: str) -> types.WorkDoneProgressReport | None:
        now = time.monotonic()
        if total <= 0:  # e.g. waiting for another indexer's lock: no fraction to show
            return types.WorkDoneProgressReport(message=message)
        percent = min(100, 100 * done // total)
        if percent <= self.shown and now - self.sent_at < self.interval:
            return None
        self.sent_at = now
        if percent < self.shown:
            message = f"{message} ({percent}%)"
        self.shown = max(self.shown, percent)
        return types.WorkDoneProgressReport(message=message, percentage=self.shown)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def uri_to_path(uri: str) -> Path:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise JsonRpcInvalidParams(f"only file:// URIs are supported, got {uri!r}")
    return Path(unquote(parsed.path)).resolve()


def plain(value: Any) -> Any:
    """pygls hands custom-request params over as namedtuples: turn them back into JSON values."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def settings_from(raw: Any) -> dict[str, Any]:
    """Accept flat settings or VS Code style ``{"codecite": {...}}``."""
    value = plain(raw)
    if isinstance(value, dict) and isinstance(value.get("codecite"), dict):
        value = value["codecite"]
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"settings must be an object, got {type(value).__name__}")
    return value


def guarded(feature: str) -> Callable[[Callable[..., Awaitable[T]]], Callable[..., Awaitable[T]]]:
    """A feature that fails reports why and answers with an error; the server keeps running."""

    def wrap(fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
        @functools.wraps(fn)
        async def run(ls: CodeciteServer, *args: Any) -> T:
            try:
                return await fn(ls, *args)
            except (JsonRpcException, asyncio.CancelledError):
                raise
            except SessionError as exc:
                raise JsonRpcInvalidParams(str(exc)) from exc
            except Cancelled:
                raise asyncio.CancelledError() from None
            except Exception as exc:
                ls.report(feature, exc)
                raise JsonRpcInternalError(f"codecite {feature} failed: {exc}") from exc

        return run

    return wrap


server = CodeciteServer()


# -- life cycle ---------------------------------------------------------------------------------


@server.feature(types.INITIALIZE)
def on_initialize(ls: CodeciteServer, params: types.InitializeParams) -> None:
    """Only cheap work here: the reply must leave within a second."""
    ls.loop = asyncio.get_running_loop()
    try:
        ls.settings = settings_from(params.initialization_options)
    except ValueError as exc:
        ls.tell(f"codecite: initializationOptions ignored: {exc}")
    folders = params.workspace_folders or []
    roots = [uri_to_path(folder.uri) for folder in folders]
    if not roots and params.root_uri:
        roots = [uri_to_path(params.root_uri)]
    elif not roots and params.root_path:
        roots = [Path(params.root_path)]
    for root in roots:
        if root.is_dir():
            ls.add_root(root)
        else:
            ls.tell(f"codecite: workspace folder not found: {root}")


@server.feature(types.INITIALIZED)
def on_initialized(ls: CodeciteServer, params: types.InitializedParams) -> None:
    for session in ls.sessions.values():
        ls.start_indexing(session)
    if any(session.config.model != "extractive" for session in ls.sessions.values()):
        ls.work.submit(_import_litellm)


def _import_litellm() -> None:
    """litellm takes ~5 s to import: pay it now, in the background, not on the first question."""
    try:
        import litellm  # noqa: F401
    except Exception as exc:  # the first question will report it properly
        log.warning("litellm cannot be imported: %s", exc)


@server.feature(types.SHUTDOWN)
def on_shutdown(ls: CodeciteServer, params: None) -> None:
    for cancel in ls.index_runs:  # an index pass would otherwise hold up the exit
        cancel.set()
    for session in list(ls.sessions.values()):
        session.close()


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def on_folders(ls: CodeciteServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    for folder in params.event.removed:
        ls.remove_root(uri_to_path(folder.uri))
    for folder in params.event.added:
        root = uri_to_path(folder.uri)
        if root.is_dir():
            ls.start_indexing(ls.add_root(root))


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def on_configuration(ls: CodeciteServer, params: types.DidChangeConfigurationParams) -> None:
    if params.settings is None:  # a "pull" client's bare ping: keep what we have
        return
    try:
        changes = settings_from(params.settings)
    except ValueError as exc:
        ls.tell(f"codecite: settings ignored: {exc}")
        return
    # Merged, not replaced: a client may send only the keys that changed; null unsets a key
    # (then the repository's config file or the default decides).
    merged = {**ls.settings, **changes}
    ls.settings = {key: value for key, value in merged.items() if value is not None}
    for session in list(ls.sessions.values()):
        needs_reindex = session.reconfigure(ls.settings)
        for problem in session.problems:
            ls.tell(f"codecite ({session.root.name}): invalid setting ignored: {problem}")
        if needs_reindex:
            ls.start_indexing(session)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def on_save(ls: CodeciteServer, params: types.DidSaveTextDocumentParams) -> None:
    try:
        session = ls.session_for(params.text_document.uri)
    except JsonRpcInvalidParams:
        return  # a file outside every workspace folder: nothing to index
    path = uri_to_path(params.text_document.uri)
    ls.work.submit(_guard_notification, ls, "index update", session.saved, path)


def _guard_notification(
    ls: CodeciteServer, feature: str, fn: Callable[..., Any], *args: Any
) -> None:
    try:
        fn(*args)
    except Exception as exc:
        ls.report(feature, exc)


# -- hover --------------------------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_HOVER)
@guarded("hover")
async def on_hover(ls: CodeciteServer, params: types.HoverParams) -> types.Hover | None:
    try:
        session = ls.session_for(params.text_document.uri)
    except JsonRpcInvalidParams:
        return None  # a file outside every workspace folder: nothing indexed to explain it
    if not session.config.hover:
        return None
    path = uri_to_path(params.text_document.uri)
    text = ls.current_text(path)
    if text is None:
        return None
    markdown = await ls.run(
        functools.partial(session.hover, encoding=ls.encoding()),
        path,
        text,
        params.position.line,
        params.position.character,
    )
    if markdown is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown))


# -- custom requests ----------------------------------------------------------------------------


def _object(params: Any, method: str) -> dict[str, Any]:
    value = plain(params)
    if not isinstance(value, dict):
        raise JsonRpcInvalidParams(f"{method}: params must be an object")
    return value


def _string(value: Any, name: str, *, limit: int | None = None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise JsonRpcInvalidParams(f"{name} must be a non-empty string")
    if limit is not None and len(value) > limit:
        raise JsonRpcInvalidParams(f"{name} is too long ({len(value)} characters; at most {limit})")
    return value


def _limit(value: Any, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_LIMIT:
        raise JsonRpcInvalidParams(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    return value


def _position(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    if (
        not isinstance(value, dict)
        or not all(isinstance(value.get(key), int) for key in ("line", "character"))
        or value["line"] < 0
        or value["character"] < 0
    ):
        raise JsonRpcInvalidParams("position must be {line: int >= 0, character: int >= 0}")
    return value["line"], value["character"]


async def _ask(ls: CodeciteServer, request: dict[str, Any]) -> dict[str, Any]:
    question = _string(request.get("question"), "question", limit=MAX_QUESTION_CHARS)
    uri = request.get("uri")
    position = _position(request.get("position"))
    if uri is not None:
        _string(uri, "uri")
        session = ls.session_for(uri)
        path: Path | None = uri_to_path(uri)
    else:
        session, path = ls.default_session(), None
    text = ls.current_text(path) if path is not None else None
    answer = await ls.run(
        functools.partial(session.ask, encoding=ls.encoding()), question, path, text, position
    )
    return answer


@server.feature(ASK)
@guarded("ask")
async def on_ask(ls: CodeciteServer, params: Any) -> dict[str, Any]:
    return await _ask(ls, _object(params, ASK))


@server.feature(SEARCH)
@guarded("search")
async def on_search(ls: CodeciteServer, params: Any) -> dict[str, Any]:
    request = _object(params, SEARCH)
    query = _string(request.get("query"), "query", limit=MAX_QUESTION_CHARS)
    limit = _limit(request.get("limit"), 10)
    session = ls.session_for(request["uri"]) if request.get("uri") else ls.default_session()
    results = await ls.run(session.search, query, limit)
    return {"results": results}


@server.feature(HISTORY)
@guarded("history")
async def on_history(ls: CodeciteServer, params: Any) -> dict[str, Any]:
    request = _object(params if params is not None else {}, HISTORY)
    limit = _limit(request.get("limit"), 20)
    entries: list[dict[str, Any]] = []
    for session in list(ls.sessions.values()):
        entries.extend(await ls.run(session.history, limit, ls.current_text))
    entries.sort(key=lambda entry: str(entry.get("time", "")), reverse=True)
    return {"entries": entries[:limit]}


@server.feature(STATUS)
@guarded("status")
async def on_status(ls: CodeciteServer, params: Any) -> dict[str, Any]:
    return {"roots": [session.status() for session in list(ls.sessions.values())]}


@server.feature(WORDING)
@guarded("wording")
async def on_wording(ls: CodeciteServer, params: Any) -> Wording:
    """The refusal wording (core/wording.json), so editors say what the CLI and hover say."""
    return wording()


# -- commands -----------------------------------------------------------------------------------


def _one_argument(args: tuple[Any, ...], command: str) -> dict[str, Any]:
    if len(args) != 1 or not isinstance(args[0], Mapping):
        raise JsonRpcInvalidParams(f"{command} takes exactly one object argument")
    return plain(dict(args[0]))


@server.command(CMD_OPEN)
@guarded("openCitation")
async def open_citation(ls: CodeciteServer, *args: Any) -> dict[str, Any]:
    citation = _one_argument(args, CMD_OPEN)
    rel = _string(citation.get("path"), "citation path")
    session = ls.citation_session(citation.get("root"), rel)
    path = session.absolute(rel)
    resolution = await ls.run(session.resolve, citation, functools.partial(ls.current_text, path))
    state = resolution["state"]
    if state in ("exact", "moved"):
        text = ls.current_text(path) or ""
        await ls.show_document_async(
            types.ShowDocumentParams(
                uri=path.as_uri(),
                take_focus=True,
                selection=line_range(text, resolution["start_line"], resolution["end_line"]),
            )
        )
        if state == "moved":
            ls.tell(
                f"codecite: the cited lines moved to {rel}:{resolution['start_line']}-"
                f"{resolution['end_line']}",
                types.MessageType.Info,
            )
    elif state == "stale":
        await ls.show_document_async(types.ShowDocumentParams(uri=path.as_uri(), take_focus=True))
        ls.tell(f"codecite: the cited lines changed in {rel}: {resolution['reason']}")
    else:
        ls.tell(f"codecite: the cited lines are gone from {rel}: {resolution['reason']}")
    return resolution


@server.command(CMD_REINDEX)
@guarded("reindex")
async def reindex(ls: CodeciteServer, *args: Any) -> dict[str, Any]:
    for session in list(ls.sessions.values()):
        ls.start_indexing(session)
    return {"started": [str(root) for root in ls.sessions]}


@server.command(CMD_ASK)
@guarded("ask")
async def ask_command(ls: CodeciteServer, *args: Any) -> dict[str, Any]:
    return await _ask(ls, _one_argument(args, CMD_ASK))


def line_range(text: str, start_line: int, end_line: int) -> types.Range:
    """1-based inclusive lines -> an LSP range from the first line's start to the last's end."""
    lines = text.split("\n")
    last = min(end_line, len(lines)) - 1
    return types.Range(
        start=types.Position(line=start_line - 1, character=0),
        end=types.Position(line=last, character=len(lines[last].rstrip("\r"))),
    )


def run_stdio() -> None:
    os.environ.setdefault("RUST_LOG", "error")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    logging.basicConfig(level=logging.WARNING)
    server.start_io()
    # The client said exit, or went away. Leave now: interpreter teardown can deadlock on a
    # daemon thread caught holding the import lock (a model call still importing litellm, ~5 s),
    # and the server would never exit. Index writes are crash-safe, so skipping it loses nothing.
    logging.shutdown()
    sys.stderr.flush()
    os._exit(0 if getattr(server.protocol, "_shutdown", False) else 1)
