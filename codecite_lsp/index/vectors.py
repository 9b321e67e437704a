"""The ``vectors`` table of the index, as a part of :class:`~.store.Store`.

Vectors are keyed by chunk ``content_hash`` (+ embedder name), never by chunk id, so a re-chunk
or a rename re-uses them and the chunks table is never rewritten when they arrive. They can always
be computed again from the chunks: a damaged vectors table is dropped (said once) and refilled by
the indexer, never a failed request.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .chunks import ChunkTables
from .meta import MetaFile
from .tables import (
    in_filters,
    open_table,
    read_column,
    readable,
    said,
    sql_literal,
    unwritable,
    vector_schema,
)
from .view import vectors_having, written_vectors

if TYPE_CHECKING:
    from ..core.records import Chunk
    from .vector_view import VectorView

log = logging.getLogger(__name__)


class Vectors:
    """The vectors of one index folder, one per (chunk content, embedder)."""

    def __init__(
        self,
        index_dir: Path,
        db: Any,
        tables: ChunkTables,
        meta: MetaFile,
        view: VectorView | None,
        fixed: bool = False,
    ) -> None:
        self._index_dir = index_dir
        self._db = db
        self._tables = tables
        self._meta = meta  # records the embedder and width of the vectors
        self._view = view
        self._lock = threading.Lock()  # guards the lazy creation of the table
        self.drops = 0  # tables dropped as damaged by this Store (the filler counts on it)
        # A folder nobody writes (a base's copy): its table, once opened, is the table. Any
        # other may be dropped and made again by another process, so it is opened each time
        # (~1.5 ms, a large share of a layered search: bench/bench_base.py).
        self._fixed = fixed
        self._opened: Any | None = None

    def table(self) -> Any | None:
        """The LanceDB table, or None if there is none (yet, or it was damaged and dropped)."""
        if self._opened is not None:
            return self._opened
        try:
            table = open_table(self._db, self._index_dir, "vectors")
        except Exception as exc:  # a damaged manifest: the vectors are rebuilt from the chunks
            self.drop(exc)
            return None
        if self._fixed:
            self._opened = table
        return table

    def version(self) -> int | None:
        """The table's version (every write makes a new one); None without a table."""
        table = self.table()
        return None if table is None else int(table.version)

    def drop(self, exc: BaseException) -> None:
        """Vectors can always be computed again: a damaged table is dropped, never a failure.
        One that failed for want of memory or room is kept (computing them again may cost a
        paid embedder's calls): this search goes on without them."""
        if (environment := unwritable(exc, self._index_dir)) is not None:
            log.warning("vectors not read: %s", environment)
            return
        log.warning(
            "the vectors in %s were damaged (%s); computing them again", self._index_dir, said(exc)
        )
        self.drops += 1  # an indexer filling only what it wrote must fill everything now
        self._opened = None
        with contextlib.suppress(Exception):
            self._db.drop_table("vectors")
        shutil.rmtree(self._index_dir / "lance" / "vectors.lance", ignore_errors=True)

    def hashes(self, embedder: str | None, among: Collection[str] | None = None) -> list[str]:
        """Content hashes holding a vector (from ``embedder``, or any; only those ``among``
        when given: a filtered read, not the whole column); [] if damaged."""
        vectors = self.table()
        if vectors is None:
            return []
        where = None if embedder is None else f"embedder = {sql_literal(embedder)}"
        try:
            if among is None:
                return read_column(vectors, "content_hash", where)
            if embedder is not None:
                held = vectors_having(self._index_dir, vectors.version, embedder, among)
                if held is not None:
                    return held
            return [
                h
                for batch in in_filters("content_hash", among)
                for h in read_column(vectors, "content_hash", _both(where, batch))
            ]
        except Exception as exc:
            self.drop(exc)
            return []

    def missing(
        self, embedder: str, limit: int, among: Collection[str] | None = None
    ) -> list[tuple[str, str]]:
        """(content_hash, text) of chunks that have no vector from ``embedder`` yet; only of
        the hashes ``among`` when given (a saved file's: its cost is the file's, not the
        index's; ``among`` mapping each hash to its text spares reading the texts back)."""
        wanted = dict.fromkeys(self._tables.content_hashes() if among is None else sorted(among))
        for h in self.hashes(embedder, among):
            wanted.pop(h, None)
        hashes = list(wanted)[:limit]
        texts = among if isinstance(among, Mapping) else self._tables.texts(hashes)
        return [(h, texts[h]) for h in hashes if h in texts]

    def lacking(self, embedder: str, size: int) -> Iterator[list[tuple[str, str]]]:
        """(content_hash, text) of every chunk without a vector from ``embedder``, ``size`` at a
        time, in one scan of the chunks table (each content hash once)."""
        seen = set(self.hashes(embedder))
        found: list[tuple[str, str]] = []
        for hashes, texts in self._tables.text_batches(size):
            for content_hash, text in zip(hashes, texts, strict=True):
                if content_hash not in seen:
                    seen.add(content_hash)
                    found.append((content_hash, text))
            while len(found) >= size:
                yield found[:size]
                found = found[size:]
        if found:
            yield found

    def put(self, embedder: str, hashes: list[str], vectors: np.ndarray) -> None:
        """Store one vector per content hash; an existing (hash, embedder) pair is kept."""
        import pyarrow as pa

        if len(hashes) != len(vectors):
            raise ValueError(f"{len(hashes)} hashes but {len(vectors)} vectors")
        if not hashes:
            return
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        dim = int(matrix.shape[1])
        with self._lock:
            table = self.table()
            if table is not None and not readable(table):
                self.drop(RuntimeError("unreadable"))
                table = None
            if table is not None and table.schema.field("vector").type.list_size != dim:
                self._db.drop_table("vectors")  # another embedder's width: those are useless now
                table = None
            if table is None:
                table = open_table(self._db, self._index_dir, "vectors", vector_schema(dim))
            meta = self._meta.read()
            if (meta.embedder, meta.dim) != (embedder, dim):
                meta.embedder, meta.dim = embedder, dim
                self._meta.save(meta)
        unique = {h: i for i, h in enumerate(hashes)}  # one row per hash
        kept = matrix[list(unique.values())]
        flat = pa.array(kept.reshape(-1), type=pa.float32())
        rows = pa.Table.from_arrays(
            [
                pa.array(list(unique), type=pa.string()),
                pa.array([embedder] * len(unique), type=pa.string()),
                pa.FixedSizeListArray.from_arrays(flat, dim),
            ],
            schema=table.schema,
        )
        before = table.version
        table.merge_insert(["content_hash", "embedder"]).when_not_matched_insert_all().execute(rows)
        written_vectors(self._index_dir, before, table.version, embedder, list(unique), kept)

    def count(self, embedder: str | None) -> int:
        """Vectors (from ``embedder``, or any) of chunks in the index: vectors of content no
        longer indexed wait for optimize() to delete them and are not counted."""
        stored = self.hashes(embedder)
        if not stored:
            return 0
        return len(set(stored) & set(self._tables.content_hashes()))

    def coverage(self, embedder: str) -> tuple[int, int]:
        """(vectors from ``embedder`` of chunks in the index, distinct chunk contents): equal
        when every chunk has its vector."""
        contents = set(self._tables.content_hashes())
        return len(contents.intersection(self.hashes(embedder))), len(contents)

    def search(self, embedder: str, vector: np.ndarray, limit: int) -> list[tuple[Chunk, float]]:
        """Chunks whose vector is nearest ``vector``, best first, scored by cosine similarity."""
        table = self.table()
        if table is None or limit <= 0:
            return []
        nearest = None
        if self._view is not None and self._tables.in_memory:
            with contextlib.suppress(Exception):  # LanceDB's own read below tells what is wrong
                nearest = self._view.nearest(table, embedder, vector, limit)
        try:
            if nearest is None:
                nearest = _nearest(table, embedder, vector, limit)
        except Exception as exc:  # keyword search still answers; the indexer refills them
            self.drop(exc)
            return []
        similarity = dict(nearest)
        found = [(c, similarity[c.content_hash]) for c in self._tables.with_hashes(similarity)]
        found.sort(key=lambda pair: (-pair[1], pair[0].path, pair[0].start_line))
        return found[:limit]

    def probe(self, whole: bool) -> None:
        """One read, as a search makes it (``whole``: every hash too): a damaged table is
        dropped, for the indexer to fill again."""
        vectors = self.table()
        if vectors is None:
            return
        try:
            vectors.search().select(["content_hash"]).limit(1).to_arrow()
            if whole:
                read_column(vectors, "content_hash")
        except Exception as exc:
            self.drop(exc)

    def optimize(self, keep: Any) -> None:
        """Delete the vectors of contents no chunk holds any more, then compact the table."""
        vectors = self.table()
        if vectors is None:
            return
        dead = set(read_column(vectors, "content_hash")) - set(self._tables.content_hashes())
        for where in in_filters("content_hash", dead):
            vectors.delete(where)
        vectors.optimize(cleanup_older_than=keep)


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
