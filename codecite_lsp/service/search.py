"""Retrieval only, no model: the chunks nearest a query, less any file that became private
since it was indexed."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..retrieve.retriever import Retriever
    from .privacy import Privacy


class SearchParts(Protocol):
    """What search uses of a Session (the retriever opens lancedb: built in the worker)."""

    @property
    def retriever(self) -> Retriever: ...

    def privacy(self) -> Privacy: ...


def search(
    parts: SearchParts, query: str, limit: int, *, cancel: threading.Event
) -> list[dict[str, Any]]:
    privacy = parts.privacy()
    results = parts.retriever.search(query, limit=limit)
    return [r.to_json() for r in results if privacy.path_refusal(r.path) is None]
