"""The server's features, one module each: thin handlers between typed params and the service's
operations (service/ask.py, search.py, citations.py, status.py) on a root's Session.

Each handler takes a ``Host`` (the server, or a fake in unit tests) and returns the JSON or LSP
value to send; the blocking work runs in ``host.run`` (a worker thread), never on the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from lsprotocol import types

if TYPE_CHECKING:
    from ...core.positions import Encoding
    from ...service.session import Session

T = TypeVar("T")


class Host(Protocol):
    """What a feature needs from the server."""

    sessions: dict[Path, Session]
    file_links: bool  # hover links as file: URIs (the client does not follow command: ones)

    def session_for(self, uri: str) -> Session: ...

    def default_session(self) -> Session: ...

    def citation_session(self, root: Any, rel: str) -> Session: ...

    def current_text(self, path: Path) -> str | None: ...

    def encoding(self) -> Encoding: ...

    async def run(self, fn: Callable[..., T], *args: Any) -> T: ...

    def tell(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None: ...

    async def show_document_async(self, params: types.ShowDocumentParams) -> None: ...
