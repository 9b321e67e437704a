"""The question path's semantic rerank: all-MiniLM-L6-v2 compares the question with each of
the best candidates, read as the chunk and each definition inside it (:func:`windows`), and the
best cosine joins the rerank score.

Why at question time and not as stored vectors: MiniLM embeds tens of texts a second on two
cores, so vectors for a whole repository take minutes to an hour, while one question's
candidates take seconds cold and milliseconds once cached (by content hash, in the index
folder: :class:`~codecite_lsp.index.minilm.VectorCache`, the cache ``embedding = "minilm"``
fills too). The search path (50 ms p95 target) and hover never run it. bench/eval_retrieval.py
measures the gain and the cost (docs/benchmarks.md).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import numpy as np

from ..core.records import Result, content_hash
from ..index.embedding import minilm_cache
from ..index.minilm import MiniLMUnavailable, VectorCache
from ..ingest.syntax import headers
from .weights import WEIGHTS

log = logging.getLogger(__name__)

# Only the best candidates are compared: each costs model time when not cached, and comparing
# 32 instead of 20 gained nothing measurable (docs/benchmarks.md).
SEMANTIC_DEPTH = 20


def windows(result: Result) -> list[str]:
    """What the model reads of a chunk: the chunk itself, then each definition inside it from
    its first line to the next one's (tree-sitter's headers; pure). The model reads 128 tokens,
    about the first 500 characters, and the definition a question is about starts later than
    that in nearly half of the chunks that hold it (docs/benchmarks.md); the chunk's own text
    keeps the content hash the vectors' fill used."""
    lines = result.chunk.text.splitlines(keepends=True)
    starts = sorted({h.start_line for h in headers(result.chunk.path, result.chunk.text)} - {1})
    bounds = [*starts, len(lines) + 1]
    return [result.chunk.text] + ["".join(lines[a - 1 : b - 1]) for a, b in pairwise(bounds)]


class SemanticRanker:
    def __init__(self, cache: VectorCache, weight: float = WEIGHTS.semantic) -> None:
        self.cache = cache
        self.weight = weight
        self.unavailable: str | None = None  # why the model cannot run (then never retried)

    def ranked(
        self,
        question: str,
        scored: Sequence[tuple[Result, float, float]],
        warnings: list[str],
    ) -> tuple[list[int], list[float]]:
        """Indices of ``scored`` (result, rerank score, role weight) best first by score +
        weight x role weight x the best cosine(question, window) of the chunk's
        :func:`windows`. The role weight keeps code first: the model, trained on prose, finds a
        guide closer to a question than the code it describes. The given order when the model
        cannot run: keyword reranking still answers, and ``warnings`` says why once. With
        the order, what the model added to each of ``scored`` (by its index in ``scored``)."""
        unchanged = (list(range(len(scored))), [0.0] * len(scored))
        if not scored or self.unavailable is not None:
            return unchanged
        results = [r for r, _, _ in scored[:SEMANTIC_DEPTH]]
        parts = [windows(r) for r in results]
        texts = [text for part in parts for text in part]
        try:
            query = self.cache.embed([question])[0]
            vectors = self.cache.vectors([content_hash(t) for t in texts], texts)
        except MiniLMUnavailable as exc:
            self.unavailable = f"semantic rerank off: {exc}"
            log.warning(self.unavailable)
            warnings.append(self.unavailable)
            return unchanged
        firsts = np.cumsum([0] + [len(part) for part in parts[:-1]])
        best = np.maximum.reduceat(vectors @ query, firsts)
        head = np.array([s for _, s, _ in scored[: len(results)]], dtype=np.float32)
        roles = np.array([w for _, _, w in scored[: len(results)]], dtype=np.float32)
        added = self.weight * roles * best
        combined = head + added
        order = sorted(range(len(results)), key=lambda i: (-combined[i], i))
        rest = range(len(results), len(scored))
        return order + list(rest), [float(a) for a in added] + [0.0] * len(rest)


def make_ranker(choice: str, index_dir: Path) -> SemanticRanker | None:
    """``rerank = "minilm"`` (vectors cached under the index folder) or ``"none"``. The model
    in memory is the one the chunks' vectors use (``embedding = "minilm"``); the windows read
    more tokens, so their vectors are cached apart."""
    if choice == "none":
        return None
    return SemanticRanker(minilm_cache(index_dir))
