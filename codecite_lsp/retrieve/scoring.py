"""Pure scoring rules of retrieval (:mod:`.retriever` explains how they combine): rank fusion,
code first, file evidence, the calibrated relevance. Each weight is named, with why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.records import Chunk, Result
from ..core.terms import role

RRF_K = 60  # the usual constant of Cormack et al.: dampens the weight of the very first ranks
# The vector ranking's weight in the fusion (keyword: 1.0). bench/eval_retrieval.py: 0.5 and
# 1.0 are within noise; 0.5 keeps a keyword hit ahead of a chunk that is merely similar.
VECTOR_WEIGHT = 0.5
# A chunk this dissimilar to the query (cosine) is noise, not a vector candidate: queries made of
# words the index never saw land around 0.15 (hashed vectors) against 0.3-0.7 for related code.
MIN_SIMILARITY = 0.2

# Code first: a chunk that is not code (docs, tests, changelogs, examples, configuration) has
# its search score scaled by this unless the question asks for that kind of file by name.
SUPPORTING_WEIGHT = {"test": 0.35, "doc": 0.35, "changelog": 0.2, "example": 0.45, "config": 0.45}

# A query of identifiers alone looks them up: a chunk holding none of them (only their parts)
# must not outrank one holding them verbatim because its file is central or a neighbour lends.
LOOKUP_MISS_WEIGHT = 0.5

# A chunk defining a plain word of the query ("retry": `def retry`) has its score scaled by this.
NAMED_LIFT = 1.3

# Evidence of the whole file: a chunk gains this share of the best other candidate of its file.
FILE_SHARE = 0.2

# The best candidates whose neighbouring chunks are scored (:mod:`.neighbours`).
NEIGHBOUR_LENDERS = 10

# The weight in the question path's rerank of how well the chunk's own definitions are named by
# the question (:class:`.names.NameMatch`): a definition's name says what it is for, and its
# body may hold few of the question's words (chosen with bench/chunk_loop.py: docs/benchmarks.md).
NAME_WEIGHT = 2.0

# The files (the best results' first ones) whose chunks join the question path's candidates when
# the question names one of their definitions that well (NameMatch).
SIBLING_FILES = 3
SIBLING_MATCH = 0.2
SIBLING_LIMIT = 6  # at most this many, the best named first

# The search score's share in the question path's rerank (it carries code-first, named
# definitions and file evidence, which word coverage alone does not see).
SEARCH_WEIGHT = 0.25
# A chunk naming its symbol in this many first lines starts that definition (with decorators
# and leading comments): it needs no signature from above.
HEAD_LINES = 8
# The share of its best caller's evidence a called definition inherits (question path).
CALLEE_SHARE = 0.85
# Chunks followed from the question's names (callers) and from the best chunks (callees).
FOLLOW_LIMIT = 6


def rrf(
    rankings: Sequence[Sequence[str]], k: int = RRF_K, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Reciprocal rank fusion: the sum of weight/(k + rank) over the rankings holding a key
    (rank 1-based; weights default to 1)."""
    scores: dict[str, float] = {}
    for i, ranking in enumerate(rankings):
        weight = weights[i] if weights else 1.0
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return scores


# ---------------------------------------------------------------------------------------------
# Reranking signals


def search_depth(limit: int) -> int:
    """Candidates taken from each ranking: fusion and the code-first weights need a deep pool."""
    return max(limit * 3, 50)


def role_weight(chunk: Chunk | Result, asked: frozenset[str], exact: float | None = None) -> float:
    """Code first, unless asked for. ``exact`` is given for a query of identifiers alone, a
    look-up: a chunk holding them is demoted half as much (the name may live in a test or a doc
    only), and one holding none of them weighs LOOKUP_MISS_WEIGHT whatever its role."""
    lookup = 1.0 if exact is None else LOOKUP_MISS_WEIGHT + (1.0 - LOOKUP_MISS_WEIGHT) * exact
    kind = role(chunk.path, chunk.language)
    if kind == "code" or kind in asked:
        return lookup
    weight = SUPPORTING_WEIGHT[kind]
    return (weight + (1.0 - weight) * (exact or 0.0) / 2) * lookup


def with_file_evidence(scores: dict[str, float], chunks: dict[str, Chunk]) -> dict[str, float]:
    """A chunk whose file holds another good candidate is more likely the place: it gains
    FILE_SHARE of the best other candidate's score in its file (not capped: callers cap)."""
    best_two: dict[str, list[float]] = {}
    for key, value in scores.items():
        top = best_two.setdefault(chunks[key].path, [])
        top.append(value)
        top.sort(reverse=True)
        del top[2:]
    lifted = {}
    for key, value in scores.items():
        top = best_two[chunks[key].path]
        # a file's best chunk gains from its runner-up, every other chunk from the best
        other = top[0] if value < top[0] else (top[1] if len(top) > 1 else 0.0)
        lifted[key] = value + FILE_SHARE * other
    return lifted


def search_score(fused: float, exact: float | None) -> float:
    """An identifier the user typed outweighs rank fusion: a chunk merely similar to one that
    holds ``rotate_key`` verbatim must not come first because both retrievers half-liked it."""
    return fused if exact is None else (fused + exact) / 2


@dataclass(frozen=True)
class Signals:
    relevance: float
    rerank: float


def relevance(coverage: float, fused: float) -> float:
    """Calibrated relevance in [0, 1]: the idf-weighted share of the question's content words
    the chunk holds, scaled by 0.75..1.0 with its fused rank. No shared content word -> 0, so a
    question about things the repository does not contain cannot clear the floor."""
    return coverage * (0.75 + 0.25 * fused)
