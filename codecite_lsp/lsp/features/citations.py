"""Citations after the answer: ``codecite.openCitation`` (show the cited lines where they are
now) and ``codecite/history`` (past answers, one page at a time, citations re-resolved)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ...service.citations import past_answers, resolve
from ...service.request_paths import absolute
from ..params import CitationArg, HistoryParams, parse

if TYPE_CHECKING:
    from . import Host

OPEN_CITATION = "codecite.openCitation"


async def open_citation(host: Host, citation: dict[str, Any]) -> dict[str, Any]:
    where = parse(CitationArg, citation, OPEN_CITATION)
    session = host.citation_session(where.root, where.path)
    path = absolute(session.root, where.path)
    resolution = await host.run(
        resolve, session, citation, functools.partial(host.current_text, path)
    )
    rel = where.path
    if resolution.state == "exact" or resolution.state == "moved":
        text = host.current_text(path) or ""
        selection = line_range(text, resolution.start_line, resolution.end_line)
        await host.show_document_async(
            types.ShowDocumentParams(uri=path.as_uri(), take_focus=True, selection=selection)
        )
        if resolution.state == "moved":
            host.tell(
                f"codecite: the cited lines moved to {rel}:{resolution.start_line}-"
                f"{resolution.end_line}",
                types.MessageType.Info,
            )
    elif resolution.state == "stale":
        await host.show_document_async(types.ShowDocumentParams(uri=path.as_uri(), take_focus=True))
        host.tell(f"codecite: the cited lines changed in {rel}: {resolution.reason}")
    else:
        host.tell(f"codecite: the cited lines are gone from {rel}: {resolution.reason}")
    dumped: dict[str, Any] = resolution.model_dump(mode="json")
    return dumped


async def history(host: Host, params: HistoryParams) -> dict[str, Any]:
    """Newest first across every root; each root reads only the entries this page can hold."""
    from ...core.responses import HistoryPage, HistoryRecord  # pydantic: off the start-up path

    wanted = params.offset + params.limit
    entries: list[HistoryRecord] = []
    for session in list(host.sessions.values()):
        entries.extend(await host.run(past_answers, session, wanted, host.current_text))
    entries.sort(key=lambda entry: entry.time, reverse=True)
    return HistoryPage(entries=entries[params.offset : wanted]).model_dump(mode="json")


def line_range(text: str, start_line: int, end_line: int) -> types.Range:
    """1-based inclusive lines -> an LSP range from the first line's start to the last's end."""
    lines = text.split("\n")
    last = min(end_line, len(lines)) - 1
    return types.Range(
        start=types.Position(line=start_line - 1, character=0),
        end=types.Position(line=last, character=len(lines[last].rstrip("\r"))),
    )
