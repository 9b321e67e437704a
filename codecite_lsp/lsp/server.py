"""The server object: the registry of workspace roots (one ``Session`` each, roots.py decides which
folders may be one), the client's settings, the text the user sees, and sending to the client
from any thread.

Messages that worker threads want to send go through ``loop.call_soon_threadsafe``: pygls'
writer is not thread-safe.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..core.files import LARGE_FILE_BYTES, read_regular
from ..service.errors import user_must_fix
from ..service.forbidden_roots import refusal
from ..service.session import Session
from . import roots
from .params import uri_to_path
from .progress import index_with_progress
from .protocol import CodeciteProtocol

if TYPE_CHECKING:
    from ..core.positions import Encoding

log = logging.getLogger("codecite_lsp")

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
        self.shown: set[str] = set()  # failures already shown to the user (report)
        self.file_links = False  # hover links as file: URIs: set at initialize (clientInfo)

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
        """One feature failed: log it (file + client) and carry on. A failure only the user
        can fix (a full disk, a Python that cannot start a worker) is also shown, once."""
        log.error("%s failed", feature, exc_info=exc)
        self.log_to_client(f"codecite: {feature} failed: {exc!r}", types.MessageType.Error)
        if user_must_fix(exc) and str(exc) not in self.shown:
            self.shown.add(str(exc))  # each save on a full disk would say it again
            self.tell(f"codecite: {exc}", types.MessageType.Error)

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
        refused = refusal(root)
        if refused is not None:
            log.warning("refused workspace root: %s", refused)
            self.tell(f"codecite: not indexing: {refused}")
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
        assert isinstance(self.protocol, CodeciteProtocol)
        return self.protocol.encoding()

    def current_text(self, path: Path) -> str | None:
        """The text the user sees: the open buffer if there is one, else the file on disk."""
        assert isinstance(self.protocol, CodeciteProtocol)
        text = self.protocol.buffers.text(path.as_uri())
        if text is not None:
            return text
        try:
            return read_regular(path, LARGE_FILE_BYTES)[0].decode("utf-8")
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
