"""``textDocument/hover``: the symbol under the cursor explained, with citation links. Only the
lines around the cursor are looked at, so a huge buffer never blocks other requests."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from ...service.hover import explain
from .. import region
from ..params import uri_to_path

if TYPE_CHECKING:
    from ...core.positions import Encoding
    from ...service.session import Session
    from . import Host


async def hover(host: Host, params: types.HoverParams) -> types.Hover | None:
    try:
        session = host.session_for(params.text_document.uri)
    except JsonRpcInvalidParams:
        return None  # a file outside every workspace folder: nothing indexed to explain it
    if not session.config.hover:
        return None
    path = uri_to_path(params.text_document.uri)
    markdown = await host.run(
        _explain, host, session, path, params.position, host.encoding(), host.file_links
    )
    if markdown is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown))


def _explain(
    host: Host,
    session: Session,
    path: Path,
    position: types.Position,
    encoding: Encoding,
    file_links: bool,
    *,
    cancel: threading.Event,
) -> str | None:
    """In a worker thread: the buffer may be large, and only the cursor's region is used."""
    text = host.current_text(path)
    found = region.around(text, position.line) if text is not None else None
    if found is None:
        return None
    lines, line = found
    return explain(
        session,
        path,
        lines,
        line,
        position.character,
        encoding,
        cancel,
        file_links=file_links,
        line_in_file=position.line,
    )
