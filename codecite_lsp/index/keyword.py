"""The full-text (BM25) search of the ``chunks`` table, as a part of :class:`~.store.Store`.

``search_text`` (built by :func:`~..core.fulltext.search_terms`) carries a whitespace-tokenised
full-text index, created once and folded forward by optimize(); rows written since are searched
by brute force. Damaged index files are rebuilt from the chunk rows, once, never a failed request.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..core.fulltext import query_terms
from ..core.records import Chunk
from .tables import IndexDamaged, _chunk_from_row, _in_filters, _said

if TYPE_CHECKING:
    from .view import IndexView

log = logging.getLogger(__name__)

_FTS_INDEX = "search_text_idx"
_FTS_MEMORY_MB = 64


class _Store(Protocol):
    """What the keyword methods use of the Store they are mixed into (their ``self``)."""

    index_dir: Path
    _chunks: Any
    _lock: threading.Lock
    _fts_ready: bool
    _view: IndexView | None

    def chunk_count(self) -> int: ...

    def ensure_fts(self) -> None: ...

    def rebuild_fts(self) -> None: ...

    def _chunks_by_id(self, ids: Collection[str]) -> list[Chunk]: ...

    def _keyword_rows(
        self, terms: str, limit: int, paths: Collection[str] | None, columns: list[str] | None
    ) -> list[dict[str, Any]]: ...


class KeywordMixin:
    """Store's keyword-search methods; each takes the Store as ``self`` (typed by ``_Store``)."""

    def unindexed_rows(self: _Store) -> int:
        """Chunk rows not yet folded into the full-text index (searched by brute force)."""
        if not self._fts_ready:
            return self.chunk_count()
        return int(self._chunks.index_stats(_FTS_INDEX).num_unindexed_rows)

    def ensure_fts(self: _Store) -> None:
        """Create the full-text index once; later rows are searchable before optimize().

        Building it over all rows at the end of a cold run is cheaper than creating it early
        and folding the rest in with optimize(); a query before that builds it on demand.
        """
        if self._fts_ready:
            return
        from lancedb.index import FTS

        with self._lock:
            if self._fts_ready:
                return
            if any(idx.name == _FTS_INDEX for idx in self._chunks.list_indices()):
                self._fts_ready = True
                return
            if self._chunks.count_rows() == 0:
                return
            config = FTS(
                base_tokenizer="whitespace",  # search_terms() already tokenised the text
                lower_case=False,
                stem=False,
                remove_stop_words=False,
                ascii_folding=False,
                max_token_length=None,
                memory_limit=_FTS_MEMORY_MB,
            )
            try:
                self._chunks.create_index(
                    "search_text", config=config, replace=False, name=_FTS_INDEX
                )
            except Exception:  # another process may have created it meanwhile
                if not any(i.name == _FTS_INDEX for i in self._chunks.list_indices()):
                    raise
            self._fts_ready = True

    def keyword_search(
        self: _Store, query: str, limit: int, paths: Collection[str] | None = None
    ) -> list[tuple[Chunk, float]]:
        """BM25 over search_text, best first; ``paths`` restricts the search to those files."""
        terms = query_terms(query)
        if not terms or limit <= 0 or (paths is not None and not paths):
            return []
        view = self._view.chunks if self._view is not None and self._view.chunks.ready else None
        columns = ["id", "_score"] if view is not None else None
        try:
            rows = self._keyword_rows(terms, limit, paths, columns)
        except Exception as exc:  # damaged full-text index files: rebuild them, once
            log.warning(
                "the full-text index in %s was damaged (%s); rebuilding it",
                self.index_dir,
                _said(exc),
            )
            try:
                self.rebuild_fts()
                rows = self._keyword_rows(terms, limit, paths, columns)
            except Exception as again:
                raise IndexDamaged(
                    f"the index in {self.index_dir} cannot be searched ({_said(again)}); "
                    "run `codecite index` to rebuild it"
                ) from None
        if view is None:
            return [(_chunk_from_row(row), float(row["_score"])) for row in rows]
        chunks = view.by_ids(row["id"] for row in rows) or [None] * len(rows)
        if None in chunks:  # written after the view's version check, or the view is reloading
            read = {c.id: c for c in self._chunks_by_id({row["id"] for row in rows})}
            chunks = [chunk or read.get(row["id"]) for row, chunk in zip(rows, chunks, strict=True)]
        return [
            (chunk, float(row["_score"]))
            for row, chunk in zip(rows, chunks, strict=True)
            if chunk is not None
        ]

    def _chunks_by_id(self: _Store, ids: Collection[str]) -> list[Chunk]:
        found: list[Chunk] = []
        for where in _in_filters("id", ids):
            rows = self._chunks.search().where(where).limit(None).to_arrow().to_pylist()
            found.extend(_chunk_from_row(row) for row in rows)
        return found

    def _keyword_rows(
        self: _Store,
        terms: str,
        limit: int,
        paths: Collection[str] | None,
        columns: list[str] | None,
    ) -> list[dict[str, Any]]:
        self.ensure_fts()
        if not self._fts_ready:
            return []  # nothing indexed yet
        search = self._chunks.search(terms, query_type="fts", fts_columns="search_text")
        if paths is not None:
            search = search.where(" OR ".join(_in_filters("path", paths)), prefilter=True)
        if columns is not None:  # the view holds the rows: read only their keys and scores
            search = search.select(columns)
        rows: list[dict[str, Any]] = search.limit(limit).to_arrow().to_pylist()
        return rows

    def rebuild_fts(self: _Store) -> None:
        """Build the full-text index again from the chunk rows (its files were damaged)."""
        with self._lock:
            with contextlib.suppress(Exception):  # its manifest entry may be what is broken
                self._chunks.drop_index(_FTS_INDEX)
            self._fts_ready = False
        self.ensure_fts()
