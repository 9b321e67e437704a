"""The language server's wiring: LSP messages and commands to the features, and the life cycle
(initialize, folders, settings, saves, shutdown). The server object itself, with its registry of
workspace roots, is server.py.

Everything slow (lancedb, tree-sitter, litellm, the model) runs in worker threads; the event loop
only parses messages, validates parameters and sends replies, so typing is never blocked.
pygls internals are touched in protocol.py only.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

from ..core.environment import apply_defaults
from ..core.wording import Wording, wording
from ..service.errors import Cancelled, SessionError
from .features import ask, citations, hover, search, status
from .params import AskParams, HistoryParams, SearchParams, one_argument, parse, plain, uri_to_path
from .progress import PartialResults, ask_progress
from .protocol import serve_stdio
from .server import CodeciteServer

log = logging.getLogger("codecite_lsp")

ASK = "codecite/ask"
SEARCH = "codecite/search"
HISTORY = "codecite/history"
STATUS = "codecite/status"
WORDING = "codecite/wording"
LOCAL_MODELS = "codecite/localModels"
CMD_OPEN = citations.OPEN_CITATION
CMD_REINDEX = "codecite.reindex"
CMD_ASK = "codecite.ask"

T = TypeVar("T")


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
    ls.file_links = follows_file_links(params.client_info)
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


# Editors whose hovers follow no `command:` URI (only VS Code and its forks do): their hover
# links are `file:` URIs, matched on clientInfo.name, lower-cased.
_FILE_LINK_CLIENTS = ("neovim", "nvim", "vim", "helix", "zed", "emacs", "eglot", "sublime", "kak")


def follows_file_links(info: types.ClientInfo | None) -> bool:
    name = info.name.lower() if info is not None else ""
    return any(client in name for client in _FILE_LINK_CLIENTS)


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
    partial = PartialResults.of(ls, plain(params).get("partialResultToken"))
    task = asyncio.current_task()
    if progress is not None and task is not None:
        # The progress' cancel button cancels the request as $/cancelRequest does: the reply
        # (RequestCancelled) leaves at once, and ls.run tells the worker to stop the model call.
        progress.on_cancel(lambda: ls.soon(task.cancel))
    outcome = "failed"
    try:
        answer = await ask.ask(ls, parsed, progress, partial)
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


@server.feature(LOCAL_MODELS)
@guarded("localModels")
async def on_local_models(ls: CodeciteServer, params: Any) -> dict[str, Any]:
    """The models of a local Ollama server, so an editor can offer to configure one; asked off
    the event loop (at most a short timeout, once per process)."""
    from ..service.local_models import local_models  # pydantic: off the start-up path

    found = await asyncio.to_thread(local_models)
    return found.model_dump(mode="json")


@server.command(CMD_OPEN)
@guarded("openCitation")
async def open_citation(ls: CodeciteServer, *args: Any) -> dict[str, Any]:
    return await citations.open_citation(ls, one_argument(args, CMD_OPEN))


@server.command(CMD_REINDEX)
@guarded("reindex")
async def reindex(ls: CodeciteServer, *args: Any) -> dict[str, Any]:
    for session in list(ls.sessions.values()):
        ls.start_indexing(session)
    from ..core.responses import ReindexReply  # pydantic: off the start-up path

    return ReindexReply(started=[str(root) for root in ls.sessions]).model_dump(mode="json")


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
