"""Pure scoring rules of retrieval (:mod:`.retriever` explains how they combine): rank fusion,
code first, file evidence, the calibrated relevance; the weights are :mod:`.weights`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..core.records import Chunk
from ..core.terms import role
from .weights import WEIGHTS


def rrf(
    rankings: Sequence[Sequence[str]],
    k: int = WEIGHTS.rrf_k,
    weights: Sequence[float] | None = None,
) -> dict[str, float]:
    """Reciprocal rank fusion: the sum of weight/(k + rank) over the rankings holding a key
    (rank 1-based; weights default to 1)."""
    scores: dict[str, float] = {}
    for i, ranking in enumerate(rankings):
        weight = weights[i] if weights else 1.0
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return scores


def reordered_by_meaning(
    scores: dict[str, float], nearest: Sequence[str], weight: float, role_of: Callable[[str], float]
) -> dict[str, float]:
    """The rules' ranking reordered by the semantic leg's votes: each key's 1/(k + its rank by
    the rules) plus ``weight`` x its role weight (code first: the model, trained on prose,
    finds a guide closer to a question than the code) / (k + its rank among the ``nearest``
    vectors). A chunk without a vector (not embedded yet) votes as one ranked past them.

    The scores stay the rules' own, handed out in the new order (the places past the rules'
    list, taken by keys only the vectors found, score below the last in proportion to their
    votes): the leg decides the order, the calibrated relevance downstream still reads the
    evidence."""
    order = sorted(scores, key=lambda key: (-scores[key], key))
    votes = {key: 1.0 / (WEIGHTS.meaning_rules_k + rank) for rank, key in enumerate(order, 1)}
    for rank, key in enumerate(nearest, start=1):
        vote = weight * role_of(key) / (WEIGHTS.meaning_k + rank)
        votes[key] = votes.get(key, 0.0) + vote
    fused = sorted(votes, key=lambda key: (-votes[key], key))
    slots = [scores[key] for key in order]
    # Past the slots, a score per vote: the last slot's (or, with none, the rules' first = 1).
    per_vote = slots[-1] / votes[fused[len(slots) - 1]] if slots else WEIGHTS.meaning_rules_k + 1.0
    return {
        key: slots[i] if i < len(slots) else votes[key] * per_vote for i, key in enumerate(fused)
    }


# ---------------------------------------------------------------------------------------------
# Reranking signals


def search_depth(limit: int) -> int:
    """Candidates taken from each ranking: fusion and the code-first weights need a deep pool."""
    return max(limit * WEIGHTS.depth_factor, WEIGHTS.depth_min)


def role_weight(chunk: Chunk, asked: frozenset[str], exact: float | None = None) -> float:
    """Code first, unless asked for. ``exact`` is given for a query of identifiers alone, a
    look-up: a chunk holding them is demoted half as much (the name may live in a test or a doc
    only), and one holding none of them weighs ``lookup_miss`` whatever its role."""
    miss = WEIGHTS.lookup_miss
    lookup = 1.0 if exact is None else miss + (1.0 - miss) * exact
    kind = role(chunk.path, chunk.language)
    if kind == "code" or kind in asked:
        return lookup
    weight = WEIGHTS.supporting[kind]
    return (weight + (1.0 - weight) * (exact or 0.0) / 2) * lookup


def with_file_evidence(scores: dict[str, float], chunks: dict[str, Chunk]) -> dict[str, float]:
    """A chunk whose file holds another good candidate is more likely the place: it gains
    ``file_share`` of the best other candidate's score in its file (not capped: callers cap)."""
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
        lifted[key] = value + WEIGHTS.file_share * other
    return lifted


def search_score(fused: float, exact: float | None) -> float:
    """An identifier the user typed outweighs rank fusion: a chunk merely similar to one that
    holds ``rotate_key`` verbatim must not come first because both retrievers half-liked it."""
    return fused if exact is None else (fused + exact) / 2


@dataclass(frozen=True)
class Signals:
    relevance: float
    rerank: float
    terms: tuple[tuple[str, float], ...] = ()  # adding up to ``rerank``

    def plus(self, name: str, value: float) -> Signals:
        if not value:
            return self
        return Signals(self.relevance, self.rerank + value, (*self.terms, (name, value)))


def relevance(coverage: float, fused: float) -> float:
    """Calibrated relevance in [0, 1]: the idf-weighted share of the question's content words
    the chunk holds, scaled by ``relevance_base``..1.0 with its fused rank. No shared content
    word -> 0, so a question about things the repository does not contain cannot clear the
    floor."""
    base = WEIGHTS.relevance_base
    return coverage * (base + (1.0 - base) * fused)
