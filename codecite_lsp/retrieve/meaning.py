"""The search's semantic leg: the chunks whose MiniLM vector is nearest the query, over the
vectors the indexer cached by content hash behind the keyword index
(:class:`~codecite_lsp.index.minilm.VectorCache`). They vote after the rules
(:func:`.scoring.reordered_by_meaning`); a chunk not embedded yet just has no vote.

Why exact search over a half-precision matrix and not a vector index: at the sizes a
language server holds (tens of thousands of chunks) one pass is a few milliseconds, has
no recall loss and nothing to rebuild when a file is saved.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from ..core.records import Chunk
from ..core.terms import word_parts
from ..index.minilm import MiniLMUnavailable, VectorCache
from .weights import WEIGHTS

if TYPE_CHECKING:
    from ..index.layered import LayeredStore
    from ..index.store import Store

log = logging.getLogger(__name__)

# Rows multiplied at once: converting a block to single precision keeps BLAS speed without a
# single-precision copy of the whole matrix.
BLOCK = 8192


class MeaningLeg:
    def __init__(self, cache: VectorCache) -> None:
        self.cache = cache
        self.unavailable: str | None = None  # why the model cannot run (then never retried)

    def _query(self, query: str, warnings: list[str]) -> np.ndarray | None:
        if self.unavailable is not None or not word_parts(query):
            return None
        try:
            vector = self.cache.embed([query])[0]
        except MiniLMUnavailable as exc:
            self.unavailable = f"semantic search off: {exc}"
            log.warning(self.unavailable)
            warnings.append(self.unavailable)
            return None
        return vector

    def nearest(
        self, query: str, store: Store | LayeredStore, limit: int, warnings: list[str]
    ) -> list[Chunk]:
        """The indexed chunks nearest ``query``, best first (at most ``limit``, each at least
        ``meaning_min_similarity`` alike); none for a query without words, before any vector
        exists, or when the model cannot run (``warnings`` then says why, once)."""
        hashes, rows = self.cache.matrix()
        if limit <= 0 or not hashes:
            return []
        vector = self._query(query, warnings)
        if vector is None:
            return []
        similarity = np.concatenate(
            [rows[i : i + BLOCK].astype(np.float32) @ vector for i in range(0, len(rows), BLOCK)]
        )
        # The cache may hold content no chunk has any more (edited since): ask for spares.
        wanted = min(len(hashes), 2 * limit)
        top = np.argpartition(-similarity, wanted - 1)[:wanted]
        floor = WEIGHTS.meaning_min_similarity
        score = {hashes[i]: float(similarity[i]) for i in top if similarity[i] >= floor}
        found = store.with_hashes(score)
        found.sort(key=lambda c: (-score[c.content_hash], c.path, c.start_line))
        return found[:limit]
