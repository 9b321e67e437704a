"""The ``vectors`` table of the index, as a part of :class:`~.store.Store`.

Vectors are keyed by chunk ``content_hash`` (+ embedder name), never by chunk id, so a re-chunk
or a rename re-uses them. They can always be computed again from the chunks: a damaged vectors
table is dropped (said once) and refilled by the indexer, never a failed request.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .tables import (
    _chunk_from_row,
    _column,
    _in_filters,
    _open_table,
    _readable,
    _said,
    _vector_schema,
    sql_literal,
)

if TYPE_CHECKING:
    from ..core.records import Chunk
    from .tables import Meta
    from .view import IndexView

log = logging.getLogger(__name__)


class _Store(Protocol):
    """What the vector methods use of the Store they are mixed into (their ``self``)."""

    index_dir: Path
    _db: Any
    _chunks: Any
    _lock: threading.Lock
    _view: IndexView | None
    vector_drops: int

    @property
    def meta(self) -> Meta: ...

    def save_meta(self, meta: Meta) -> None: ...

    def _vectors_table(self) -> Any | None: ...

    def _drop_vectors(self, exc: BaseException) -> None: ...

    def _vector_hashes(
        self, embedder: str | None, among: Collection[str] | None = None
    ) -> list[str]: ...


class VectorsMixin:
    """Store's vector methods; each takes the Store as ``self`` (typed by ``_Store``)."""

    def _vectors_table(self: _Store) -> Any | None:
        try:
            return _open_table(self._db, self.index_dir, "vectors")
        except Exception as exc:  # a damaged manifest: the vectors are rebuilt from the chunks
            self._drop_vectors(exc)
            return None

    def _drop_vectors(self: _Store, exc: BaseException) -> None:
        """Vectors can always be computed again: a damaged table is dropped, never a failure."""
        log.warning(
            "the vectors in %s were damaged (%s); computing them again", self.index_dir, _said(exc)
        )
        self.vector_drops += 1  # an indexer filling only what it wrote must fill everything now
        with contextlib.suppress(Exception):
            self._db.drop_table("vectors")
        shutil.rmtree(self.index_dir / "lance" / "vectors.lance", ignore_errors=True)

    def _vector_hashes(
        self: _Store, embedder: str | None, among: Collection[str] | None = None
    ) -> list[str]:
        """Content hashes holding a vector (from ``embedder``, or any; only those ``among``
        when given: a filtered read, not the whole column); [] if damaged."""
        vectors = self._vectors_table()
        if vectors is None:
            return []
        where = None if embedder is None else f"embedder = {sql_literal(embedder)}"
        try:
            if among is None:
                return _column(vectors, "content_hash", where)
            return [
                h
                for batch in _in_filters("content_hash", among)
                for h in _column(vectors, "content_hash", _both(where, batch))
            ]
        except Exception as exc:
            self._drop_vectors(exc)
            return []

    def missing_vectors(
        self: _Store, embedder: str, limit: int, among: Collection[str] | None = None
    ) -> list[tuple[str, str]]:
        """(content_hash, text) of chunks that have no vector from ``embedder`` yet; only of
        the hashes ``among`` when given (a saved file's: its cost is the file's, not the
        index's)."""
        wanted = dict.fromkeys(
            _column(self._chunks, "content_hash") if among is None else sorted(among)
        )
        for h in self._vector_hashes(embedder, among):
            wanted.pop(h, None)
        hashes = list(wanted)[:limit]
        texts: dict[str, str] = {}
        for where in _in_filters("content_hash", hashes):
            rows = self._chunks.search().where(where).select(["content_hash", "text"])
            for row in rows.limit(None).to_arrow().to_pylist():
                texts.setdefault(row["content_hash"], row["text"])
        return [(h, texts[h]) for h in hashes if h in texts]

    def put_vectors(self: _Store, embedder: str, hashes: list[str], vectors: np.ndarray) -> None:
        """Store one vector per content hash; an existing (hash, embedder) pair is kept."""
        import pyarrow as pa

        if len(hashes) != len(vectors):
            raise ValueError(f"{len(hashes)} hashes but {len(vectors)} vectors")
        if not hashes:
            return
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        dim = int(matrix.shape[1])
        with self._lock:
            table = self._vectors_table()
            if table is not None and not _readable(table):
                self._drop_vectors(RuntimeError("unreadable"))
                table = None
            if table is not None and table.schema.field("vector").type.list_size != dim:
                self._db.drop_table("vectors")  # another embedder's width: those are useless now
                table = None
            if table is None:
                table = _open_table(self._db, self.index_dir, "vectors", _vector_schema(dim))
            meta = self.meta
            if (meta.embedder, meta.dim) != (embedder, dim):
                meta.embedder, meta.dim = embedder, dim
                self.save_meta(meta)
        unique = {h: i for i, h in enumerate(hashes)}  # one row per hash
        flat = pa.array(matrix[list(unique.values())].reshape(-1), type=pa.float32())
        rows = pa.Table.from_arrays(
            [
                pa.array(list(unique), type=pa.string()),
                pa.array([embedder] * len(unique), type=pa.string()),
                pa.FixedSizeListArray.from_arrays(flat, dim),
            ],
            schema=table.schema,
        )
        table.merge_insert(["content_hash", "embedder"]).when_not_matched_insert_all().execute(rows)

    def vector_count(self: _Store, embedder: str | None) -> int:
        """Vectors (from ``embedder``, or any) of chunks in the index: vectors of content no
        longer indexed wait for optimize() to delete them and are not counted."""
        stored = self._vector_hashes(embedder)
        if not stored:
            return 0
        return len(set(stored) & set(_column(self._chunks, "content_hash")))

    def vector_coverage(self: _Store, embedder: str) -> tuple[int, int]:
        """(vectors from ``embedder`` of chunks in the index, distinct chunk contents): equal
        when every chunk has its vector."""
        contents = set(_column(self._chunks, "content_hash"))
        return len(contents.intersection(self._vector_hashes(embedder))), len(contents)

    def vector_search(
        self: _Store, embedder: str, vector: np.ndarray, limit: int
    ) -> list[tuple[Chunk, float]]:
        """Chunks whose vector is nearest ``vector``, best first, scored by cosine similarity."""
        table = self._vectors_table()
        if table is None or limit <= 0:
            return []
        nearest = None
        if self._view is not None and self._view.chunks.ready:
            with contextlib.suppress(Exception):  # LanceDB's own read below tells what is wrong
                nearest = self._view.vectors.nearest(table, embedder, vector, limit)
        try:
            if nearest is None:
                nearest = _nearest(table, embedder, vector, limit)
        except Exception as exc:  # keyword search still answers; the indexer refills them
            self._drop_vectors(exc)
            return []
        similarity = dict(nearest)
        chunks = self._view.chunks.with_hashes(similarity) if self._view is not None else None
        if chunks is None:  # no view, or it is reloading: read the chunks behind the vectors
            chunks = [
                _chunk_from_row(row)
                for where in _in_filters("content_hash", similarity)
                for row in self._chunks.search().where(where).limit(None).to_arrow().to_pylist()
            ]
        found = [(c, similarity[c.content_hash]) for c in chunks]
        found.sort(key=lambda pair: (-pair[1], pair[0].path, pair[0].start_line))
        return found[:limit]


def _both(first: str | None, second: str) -> str:
    return second if first is None else f"({first}) AND ({second})"


def _nearest(table: Any, embedder: str, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
    """(content hash, cosine similarity) of the ``limit`` nearest vectors: LanceDB's scan."""
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    if query.shape[0] != table.schema.field("vector").type.list_size:
        return []
    hits = (
        table.search(query, vector_column_name="vector")
        .distance_type("cosine")
        .where(f"embedder = {sql_literal(embedder)}", prefilter=True)
        .select(["content_hash", "_distance"])
        .limit(limit)
        .to_arrow()
        .to_pylist()
    )
    return [(h["content_hash"], 1.0 - float(h["_distance"])) for h in hits]
