"""The full-text (BM25) index of the ``chunks`` table, as a part of :class:`~.store.Store`.

``search_text`` (built by :func:`~..core.fulltext.search_terms`) carries a whitespace-tokenised
full-text index, created once and folded forward by optimize(); rows written since are searched
by brute force. Damaged index files are rebuilt from the chunk rows, once, never a failed request.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..core.fulltext import query_terms
from ..core.memory import release
from ..core.records import Chunk
from .chunks import ChunkTables
from .tables import IndexDamaged, chunk_from_row, in_filters, said, unwritable

log = logging.getLogger(__name__)

_FTS_INDEX = "search_text_idx"
_CREATE_TRIES = 3  # two writers creating the index at once: lance fails one of them
# Each build worker writes a partition of the index whenever its postings reach this size, and
# a query reads every partition: at 1.1M chunks 64 MB made 72 partitions, 512 MB makes 6, and a
# first query's terms cost 33 instead of 70 ms p50 and 0.4 instead of 0.9 GB of LanceDB's cache
# (docs/benchmarks.md). The build's peak grows with it: 1.4 GB at that size.
_FTS_MEMORY_MB = 512


def build_fts(chunks: Any) -> None:
    """Create the full-text index of a chunks table (raises if another writer is at it)."""
    from lancedb.index import FTS

    config = FTS(
        base_tokenizer="whitespace",  # search_terms() already tokenised the text
        lower_case=False,
        stem=False,
        remove_stop_words=False,
        ascii_folding=False,
        max_token_length=None,
        memory_limit=_FTS_MEMORY_MB,
    )
    chunks.create_index("search_text", config=config, replace=False, name=_FTS_INDEX)


class KeywordIndex:
    """The full-text index over the chunk rows of ``tables``."""

    def __init__(self, index_dir: Path, tables: ChunkTables) -> None:
        self._index_dir = index_dir  # named in messages
        self._tables = tables
        self._lock = threading.Lock()  # guards the lazy creation of the index
        self._ready = False

    def unindexed_rows(self) -> int:
        """Chunk rows not yet folded into the full-text index (searched by brute force)."""
        if not self._ready:
            return self._tables.chunk_count()
        return int(self._tables.chunks.index_stats(_FTS_INDEX).num_unindexed_rows)

    def ensure(self) -> None:
        """Create the full-text index once; later rows are searchable before optimize().

        Building it over all rows at the end of a cold run is cheaper than creating it early
        and folding the rest in with optimize(); a query before that builds it on demand.
        """
        if self._ready:
            return
        chunks = self._tables.chunks
        with self._lock:
            if self._ready:
                return
            if any(idx.name == _FTS_INDEX for idx in chunks.list_indices()):
                self._ready = True
                return
            if chunks.count_rows() == 0:
                return
            release()  # what the pass before freed: the build's peak comes on top of it
            for attempt in range(_CREATE_TRIES):
                try:
                    build_fts(chunks)
                    break
                except Exception:
                    # Another writer of this folder (the indexer building it at the end of its
                    # pass, another process) may be creating it at the same moment; lance then
                    # fails one of the two with an I/O error. Theirs counts; else try again.
                    time.sleep(0.2 * (attempt + 1))
                    if any(i.name == _FTS_INDEX for i in chunks.list_indices()):
                        break
                    if attempt == _CREATE_TRIES - 1:
                        raise
            self._ready = True

    def search(
        self, query: str, limit: int, paths: Collection[str] | None = None
    ) -> list[tuple[Chunk, float]]:
        """BM25 over search_text, best first; ``paths`` restricts the search to those files."""
        terms = query_terms(query)
        if not terms or limit <= 0 or (paths is not None and not paths):
            return []
        in_memory = self._tables.in_memory
        columns = ["id", "_score"] if in_memory else None  # the view holds the rows
        try:
            rows = self._rows(terms, limit, paths, columns)
        except Exception as exc:  # damaged full-text index files: rebuild them, once
            if (environment := unwritable(exc, self._index_dir)) is not None:
                raise environment from exc  # dropping the index would lose it, not repair it
            log.warning(
                "the full-text index in %s was damaged (%s); rebuilding it",
                self._index_dir,
                said(exc),
            )
            try:
                self.rebuild()
                rows = self._rows(terms, limit, paths, columns)
            except Exception as again:
                raise IndexDamaged(
                    f"the index in {self._index_dir} cannot be searched ({said(again)}); "
                    "run `codecite index` to rebuild it"
                ) from None
        if not in_memory:
            return [(chunk_from_row(row), float(row["_score"])) for row in rows]
        chunks = self._tables.by_ids([row["id"] for row in rows])
        return [
            (chunk, float(row["_score"]))
            for row, chunk in zip(rows, chunks, strict=True)
            if chunk is not None
        ]

    def rebuild(self) -> None:
        """Build the full-text index again from the chunk rows (its files were damaged)."""
        with self._lock:
            with contextlib.suppress(Exception):  # its manifest entry may be what is broken
                self._tables.chunks.drop_index(_FTS_INDEX)
            self._ready = False
        self.ensure()

    def _rows(
        self,
        terms: str,
        limit: int,
        paths: Collection[str] | None,
        columns: list[str] | None,
    ) -> list[dict[str, Any]]:
        self.ensure()
        if not self._ready:
            return []  # nothing indexed yet
        search = self._tables.chunks.search(terms, query_type="fts", fts_columns="search_text")
        if paths is not None:
            search = search.where(" OR ".join(in_filters("path", paths)), prefilter=True)
        if columns is not None:
            search = search.select(columns)
        rows: list[dict[str, Any]] = search.limit(limit).to_arrow().to_pylist()
        return rows
