"""The in-memory view of one embedder's vectors, a normalised matrix: a search's brute-force
vector query answered from memory instead of reading every vector from disk
(docs/benchmarks.md: `bench/bench_search.py`).

Like the chunk view it follows the table by version, and is told this process's own inserts
(:func:`.view.written_vectors`) instead of reading them back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.memory import release
from .tables import IN_BATCH, in_filters, sql_literal

log = logging.getLogger(__name__)

# Past this many vectors the matrix holds int8 codes (a quarter of float32's memory: 256 bytes
# a vector of the default embedder instead of 1 KB; cosines within ~0.005 of the exact ones).
EXACT_VECTORS_MAX = 200_000
_CODE_SCALE = 127.0
_BLOCK_ROWS = 16_384  # rows scored at a time from int8 codes (a 16 MB float block)


@dataclass
class _Matrix:
    """The first ``rows`` rows of ``matrix`` are the vectors of ``hashes[:rows]``: unit float32
    rows, or int8 codes of them (``coded``). The buffer and the list grow in place when this
    process appends vectors (a reader holding an older _Matrix keeps reading its own first
    rows); ``slot`` maps each hash to its row."""

    version: int = -1
    embedder: str = ""
    hashes: list[str] = field(default_factory=list)  # rows of the matrix, in scan order
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    rows: int = 0
    slot: dict[str, int] = field(default_factory=dict)

    @property
    def coded(self) -> bool:
        return self.matrix.dtype == np.int8

    def similarity(self, query: np.ndarray) -> np.ndarray:
        """Cosine of each row with a unit ``query``."""
        if not self.coded:
            # einsum, not BLAS: a multi-threaded gemv spins against a busy machine (several
            # times slower on 2 cores under load); one pass is memory-bound anyway.
            return np.einsum("ij,j->i", self.matrix[: self.rows], query)
        scores = np.empty(self.rows, dtype=np.float32)
        scaled = (query / _CODE_SCALE).astype(np.float32)
        for start in range(0, self.rows, _BLOCK_ROWS):
            block = self.matrix[start : min(start + _BLOCK_ROWS, self.rows)]
            scores[start : start + len(block)] = block.astype(np.float32) @ scaled
        return scores


def _normalised(values: np.ndarray, dim: int) -> np.ndarray:
    block = values.reshape(-1, dim).astype(np.float32)
    norms = np.linalg.norm(block, axis=1, keepdims=True)
    return np.divide(block, norms, out=np.zeros_like(block), where=norms > 0)


def _stored(unit: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """Unit rows as the matrix holds them."""
    if dtype == np.int8:
        return np.round(unit * _CODE_SCALE).astype(np.int8)
    return unit


class VectorView:
    """One embedder's vectors as a row-normalised matrix: a cosine top-k is one matrix-vector
    product instead of LanceDB's scan of the vectors table."""

    def __init__(self, exact_max: int = EXACT_VECTORS_MAX, fixed: bool = False) -> None:
        self._held = _Matrix()
        self._lock = threading.Lock()
        self._exact_max = exact_max
        self._fixed = fixed  # as ChunkView's

    def _sync(self, table: Any, embedder: str) -> _Matrix:
        held = self._held
        if self._fixed and held.embedder == embedder:
            return held
        version = table.version
        if (version, embedder) == (held.version, held.embedder):
            return held
        where = f"embedder = {sql_literal(embedder)}"
        column = table.search().where(where).select(["content_hash"]).limit(None).to_arrow()
        hashes: list[str] = column["content_hash"].to_pylist()
        dim = table.schema.field("vector").type.list_size
        dtype = np.dtype(np.int8 if len(hashes) > self._exact_max else np.float32)
        old = held.slot if held.embedder == embedder else {}
        if held.matrix.shape[1:] != (dim,) or held.matrix.dtype != dtype:
            old = {}
        matrix = np.zeros((len(hashes), dim), dtype=dtype)
        kept = [(i, old[h]) for i, h in enumerate(hashes) if h in old]
        if kept:
            new_rows, old_rows = map(list, zip(*kept, strict=True))
            matrix[new_rows] = held.matrix[old_rows]
        slot = {h: i for i, h in enumerate(hashes)}
        missing = [h for h in hashes if h not in old]
        # Many new vectors (the first use, a large pass): one scan beats filters of 500 each.
        if len(missing) > IN_BATCH:
            wheres = [where]
        else:
            wheres = [f"{where} AND {batch}" for batch in in_filters("content_hash", missing)]
        for clause in wheres:
            query = table.search().where(clause).select(["content_hash", "vector"]).limit(None)
            for found in query.to_batches():  # batches: no float copy of every vector at once
                values = found["vector"].flatten().to_numpy(zero_copy_only=False)
                rows = [slot[h] for h in found["content_hash"].to_pylist()]
                matrix[rows] = _stored(_normalised(values, dim), dtype)
        self._held = _Matrix(version, embedder, hashes, matrix, len(hashes), slot)
        if len(missing) > IN_BATCH:  # a whole read, not a save's few rows (gc costs ms)
            release()  # Arrow's pool and the heap keep tens of MB of the read
        return self._held

    def written(
        self, before: int, after: int, embedder: str, hashes: Sequence[str], vectors: np.ndarray
    ) -> None:
        """This process inserted the vectors of ``hashes`` not yet stored (one merge, under the
        write lock), taking the table from ``before`` to ``after``: appended here when the view
        holds ``before``, without reading the table."""
        with self._lock:
            held = self._held
            dim = held.matrix.shape[1] if held.matrix.ndim == 2 else 0
            if (held.version, held.embedder) != (before, embedder) or vectors.shape[1:] != (dim,):
                return
            new = [i for i, h in enumerate(hashes) if h not in held.slot]
            matrix = held.matrix
            if held.rows + len(new) > len(matrix):  # grow by half: appends cost their own rows
                size = max(held.rows + len(new), len(matrix) * 3 // 2)
                matrix = np.zeros((size, dim), dtype=held.matrix.dtype)
                matrix[: held.rows] = held.matrix[: held.rows]
            unit = _normalised(vectors[new], dim)
            matrix[held.rows : held.rows + len(new)] = _stored(unit, held.matrix.dtype)
            for offset, i in enumerate(new):
                held.slot[hashes[i]] = held.rows + offset
                held.hashes.append(hashes[i])
            self._held = _Matrix(
                after, embedder, held.hashes, matrix, held.rows + len(new), held.slot
            )

    def having(self, version: int, embedder: str, hashes: Iterable[str]) -> list[str] | None:
        """Which of ``hashes`` have a vector from ``embedder`` at table ``version`` (None when
        the view does not hold that version: then the table is asked)."""
        with self._lock:
            held = self._held
            if (held.version, held.embedder) != (version, embedder):
                return None
            return [h for h in hashes if h in held.slot]

    def nearest(
        self, table: Any, embedder: str, vector: np.ndarray, limit: int
    ) -> list[tuple[str, float]]:
        """(content hash, cosine similarity) of the ``limit`` nearest vectors, best first (more
        when several are as near as the last)."""
        with self._lock:
            held = self._sync(table, embedder)
        if not held.rows or limit <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(query))
        if query.shape[0] != held.matrix.shape[1] or norm == 0.0:
            return []
        similarity = held.similarity(query / norm)
        if limit < len(similarity):
            # Every vector as near as the last one kept: LanceDB keeps an arbitrary few of
            # equal ones; the caller orders those by path and keeps ``limit`` chunks.
            last = similarity[np.argpartition(-similarity, limit - 1)[limit - 1]]
            top = np.flatnonzero(similarity >= last)
        else:
            top = np.arange(len(similarity))
        top = top[np.lexsort((top, -similarity[top]))]  # best first
        return [(held.hashes[i], float(similarity[i])) for i in top]
