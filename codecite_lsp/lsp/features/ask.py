"""``codecite/ask`` (and the ``codecite.ask`` command): a question, maybe with the editor's file
and cursor, answered by the root's Answerer."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import region
from ..params import AskParams, uri_to_path

if TYPE_CHECKING:
    from ...ingest.chunking import Encoding
    from ...service.session import Session
    from . import Host


async def ask(host: Host, params: AskParams) -> dict[str, Any]:
    if params.uri is not None:
        session = host.session_for(params.uri)
        path: Path | None = uri_to_path(params.uri)
    else:
        session, path = host.default_session(), None
    return await host.run(_ask, host, session, params, path, host.encoding())


def _ask(
    host: Host,
    session: Session,
    params: AskParams,
    path: Path | None,
    encoding: Encoding,
    *,
    cancel: threading.Event,
) -> dict[str, Any]:
    """In a worker thread: the buffer may be large, and only the cursor's region is used."""
    text = host.current_text(path) if path is not None else None
    position: tuple[int, int] | None = None
    if text is not None and params.position is not None:
        found = region.around(text, params.position.line)
        text, position = (
            (None, None) if found is None else (found[0], (found[1], params.position.character))
        )
    return session.ask(params.question, path, text, position, encoding=encoding, cancel=cancel)
