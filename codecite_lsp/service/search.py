"""Retrieval only, no model: the chunks nearest a query, less any file that became private
since it was indexed."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..core.records import Result
    from ..core.responses import SearchResult
    from ..retrieve.retriever import Retriever
    from .privacy import Privacy


class SearchParts(Protocol):
    """What search uses of a Session (the retriever opens lancedb: built in the worker)."""

    @property
    def retriever(self) -> Retriever: ...

    def privacy(self) -> Privacy: ...


def search(
    parts: SearchParts, query: str, limit: int, *, cancel: threading.Event
) -> list[SearchResult]:
    from ..core.responses import SearchResult  # pydantic: kept off the start-up path

    results = visible_results(parts.retriever, parts.privacy(), query, limit)
    return [SearchResult.of(r) for r in results]


def visible_results(retriever: Retriever, privacy: Privacy, query: str, limit: int) -> list[Result]:
    """The retriever's results for ``query``, less those whose file is now private."""
    results = retriever.results(query, limit=limit)
    return [r for r in results if privacy.path_refusal(r.chunk.path) is None]
