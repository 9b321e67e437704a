"""The language server: wiring between LSP messages and the features, and the registry of
workspace roots (one ``Session`` each).

Everything slow (lancedb, tree-sitter, litellm, the model) runs in worker threads; the event loop
only parses messages, validates parameters and sends replies, so typing is never blocked.
Messages that worker threads want to send go through ``loop.call_soon_threadsafe``: pygls'
writer is not thread-safe. pygls internals are touched in protocol.py only.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..core.environment import apply_defaults
from ..core.wording import Wording, wording
from ..service.errors import Cancelled, SessionError
from ..service.session import Session
from . import roots
from .features import ask, citations, hover, search, status
from .params import AskParams, HistoryParams, SearchParams, one_argument, parse, plain, uri_to_path
from .progress import ask_progress, index_with_progress
from .protocol import CodeciteProtocol, serve_stdio

if TYPE_CHECKING:
    from ..ingest.symbols import Encoding

log = logging.getLogger("codecite_lsp")

ASK = "codecite/ask"
SEARCH = "codecite/search"
HISTORY = "codecite/history"
STATUS = "codecite/status"
WORDING = "codecite/wording"
CMD_OPEN = citations.OPEN_CITATION
CMD_REINDEX = "codecite.reindex"
CMD_ASK = "codecite.ask"

T = TypeVar("T")


class CodeciteServer(LanguageServer):
    """Holds one ``Session`` per workspace folder and the settings sent by the client."""

    def __init__(self) -> None:
        super().__init__("codecite-lsp", __version__, protocol_cls=CodeciteProtocol)
        self.sessions: dict[Path, Session] = {}
        self.settings: dict[str, Any] = {}
        self.cached: dict[Path, str] = {}  # roots indexed in the cache (their folder unwritable)
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

    # -- roots --------------------------------------------------------------------------------

    def add_root(self, root: Path) -> Session | None:
        """A folder the client opened becomes a root, unless it must not be one (said why)."""
        root = root.resolve()
        existing = self.sessions.get(root)
        if existing is not None:
            return existing
        if not root.is_dir():
            self.tell(f"codecite: workspace folder not found: {root}")
            return None
        refused = roots.refusal(root)
        if refused is not None:
            log.warning("refused workspace root: %s", refused)
            self.tell(f"codecite: not indexing {refused}")
            return None
        session = Session(root, self.settings)
        unwritable = roots.unwritable(session.index_dir)
        cached = roots.cache_instead(root, session.config) if unwritable is not None else None
        if cached is not None:
            session.close()
            self.cached[root] = str(cached)
            session = Session(root, self.settings_for(root))
            self.tell(f"codecite: {unwritable}; {root.name} is indexed in {cached} instead")
            unwritable = None
        if unwritable is not None:
            session.close()
            self.tell(
                f"codecite: {root.name} is not indexed: {unwritable}. Set `index_dir` to a "
                "folder you can write to."
            )
            return None
        self.sessions[root] = session
        moved = session.config.index_dir_note(root)
        if moved is not None:
            self.tell(f"codecite: {moved}", types.MessageType.Info)
        for problem in session.problems:
            self.tell(f"codecite ({root.name}): invalid setting ignored: {problem}")
        return session

    def settings_for(self, root: Path) -> dict[str, Any]:
        """The client's settings, with the cache folder of a root that cannot hold its index
        (unless the user has since chosen an ``index_dir``)."""
        if root in self.cached and not self.settings.get("index_dir"):
            return {**self.settings, "index_dir": self.cached[root]}
        return self.settings

    def remove_root(self, root: Path) -> None:
        self.cached.pop(root.resolve(), None)
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
        task = asyncio.ensure_future(index_with_progress(self, session))
        self.tasks.add(task)  # keep a reference: the loop only holds tasks weakly
        task.add_done_callback(self.tasks.discard)

    async def show_document_async(self, params: types.ShowDocumentParams) -> None:
        window = self.client_capabilities.window
        if window and window.show_document and window.show_document.support:
            await self.window_show_document_async(params)
        else:  # the client cannot open files for us: say where to look
            self.tell(f"codecite: open {params.uri}", types.MessageType.Info)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


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
    folders = [uri_to_path(folder.uri) for folder in params.workspace_folders or []]
    if not folders and params.root_uri:
        folders = [uri_to_path(params.root_uri)]
    elif not folders and params.root_path:
        folders = [Path(params.root_path)]
    for root in folders:
        ls.add_root(root)


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
        session = ls.add_root(uri_to_path(folder.uri))
        if session is not None:
            ls.start_indexing(session)


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
        needs_reindex = session.reconfigure(ls.settings_for(session.root))
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
    ls.work.submit(_guard_notification, ls, "index update", session.upkeep.saved, path)


def _guard_notification(
    ls: CodeciteServer, feature: str, fn: Callable[..., Any], *args: Any
) -> None:
    try:
        fn(*args)
    except Exception as exc:
        ls.report(feature, exc)


# -- features -----------------------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_HOVER)
@guarded("hover")
async def on_hover(ls: CodeciteServer, params: types.HoverParams) -> types.Hover | None:
    return await hover.hover(ls, params)


@server.feature(ASK)
@guarded("ask")
async def on_ask(ls: CodeciteServer, params: Any) -> dict[str, Any]:
    parsed = parse(AskParams, params, ASK)
    progress = await ask_progress(ls, plain(params).get("workDoneToken"))
    task = asyncio.current_task()
    if progress is not None and task is not None:
        # The progress' cancel button cancels the request as $/cancelRequest does: the reply
        # (RequestCancelled) leaves at once, and ls.run tells the worker to stop the model call.
        progress.on_cancel(lambda: ls.soon(task.cancel))
    outcome = "failed"
    try:
        answer = await ask.ask(ls, parsed, progress)
        outcome = str(answer.get("status", "answered"))
        return answer
    except (Cancelled, asyncio.CancelledError):
        outcome = "cancelled"
        raise
    finally:
        if progress is not None:
            progress.end(outcome)


@server.feature(SEARCH)
@guarded("search")
async def on_search(ls: CodeciteServer, params: Any) -> dict[str, Any]:
    return await search.search(ls, parse(SearchParams, params, SEARCH))


@server.feature(HISTORY)
@guarded("history")
async def on_history(ls: CodeciteServer, params: Any) -> dict[str, Any]:
    return await citations.history(
        ls, parse(HistoryParams, {} if params is None else params, HISTORY)
    )


@server.feature(STATUS)
@guarded("status")
async def on_status(ls: CodeciteServer, params: Any) -> dict[str, Any]:
    return await status.status(ls)


@server.feature(WORDING)
@guarded("wording")
async def on_wording(ls: CodeciteServer, params: Any) -> Wording:
    """The refusal wording (core/wording.json), so editors say what the CLI and hover say."""
    return wording()


@server.command(CMD_OPEN)
@guarded("openCitation")
async def open_citation(ls: CodeciteServer, *args: Any) -> dict[str, Any]:
    return await citations.open_citation(ls, one_argument(args, CMD_OPEN))


@server.command(CMD_REINDEX)
@guarded("reindex")
async def reindex(ls: CodeciteServer, *args: Any) -> dict[str, Any]:
    for session in list(ls.sessions.values()):
        ls.start_indexing(session)
    return {"started": [str(root) for root in ls.sessions]}


@server.command(CMD_ASK)
@guarded("ask")
async def ask_command(ls: CodeciteServer, *args: Any) -> dict[str, Any]:
    return await ask.ask(ls, parse(AskParams, one_argument(args, CMD_ASK), CMD_ASK))


def run_stdio() -> None:
    apply_defaults()
    logging.basicConfig(level=logging.WARNING)
    serve_stdio(server)
    # The client said exit, or went away. Leave now: interpreter teardown can deadlock on a
    # daemon thread caught holding the import lock (a model call still importing litellm, ~5 s),
    # and the server would never exit. Index writes are crash-safe, so skipping it loses nothing.
    logging.shutdown()
    sys.stderr.flush()
    os._exit(0 if getattr(server.protocol, "_shutdown", False) else 1)
