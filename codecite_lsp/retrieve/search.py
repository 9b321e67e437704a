"""Search's ranking pass: keyword, fields and vector candidates fused by reciprocal rank fusion
(:class:`.rules.Fusion`), then :data:`.rules.RULES` in order through the
:class:`.ledger.Ledger`; read two ways (:class:`Ranking`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.records import Chunk, Result
from ..index.embedder import EmbeddingError
from ..index.static_embedding import StaticEmbedder
from .fields import field_ranking
from .ledger import Ledger
from .query import Query
from .rules import RULES, Context, Fusion, Rule, Scores, best_first
from .scoring import rrf, search_depth
from .selection import dedup_overlapping
from .weights import WEIGHTS

if TYPE_CHECKING:
    from .retriever import Retriever

log = logging.getLogger(__name__)

# The question reads the scores before search's own rules, which run last (a test checks).
SHARED = tuple(rule for rule in RULES if "question" in rule.paths)
SEARCH_ONLY = RULES[len(SHARED) :]


@dataclass(frozen=True)
class Ranking:
    """One search's ranking read two ways: ``shown``, what ``codecite search`` lists (each
    further chunk of a file scaled by ``file_repeat``, the scores scaled into (0, 1]); and
    ``evidence``, the same candidates before those two rules, each at the score its evidence
    made (the question path's pool: it wants a definition's neighbours in it, and calibrates
    its relevance on those scores)."""

    shown: list[Result]
    evidence: list[Result]


def vector_ranking(retriever: Retriever, query: Query, limit: int) -> list[tuple[Chunk, float]]:
    embedder = retriever.embedder
    if embedder is None:
        return []
    if isinstance(embedder, StaticEmbedder) and (embedder.model is None or not query.words):
        return []  # untrained, or a query without words ("((((") has nothing to compare
    state = retriever.state
    try:
        if embedder.name != state.has_vectors:
            if retriever.store.vector_count(embedder.name) == 0:
                return []
            state.has_vectors = embedder.name  # vectors never vanish: count once per name
        vector = embedder.embed([query.text])[0]
    except EmbeddingError as exc:  # keyword results still answer
        message = f"vector search skipped: {exc}"
        if message not in retriever.warnings:
            retriever.warnings.append(message)
            log.warning(message)
        return []
    found = retriever.store.vector_search(embedder.name, vector, limit)
    return [
        (chunk, similarity) for chunk, similarity in found if similarity >= WEIGHTS.min_similarity
    ]


def ranking(retriever: Retriever, query: Query, limit: int) -> Ranking:
    """One search's ranking, read two ways (:class:`Ranking`)."""
    if query.blank:
        return Ranking([], [])
    if retriever.words is not None:
        retriever.words.refresh()  # the indexer may have (re)trained it since we opened
    store, depth = retriever.store, search_depth(limit)
    keyword = store.keyword_search(query.text, depth)
    vector = vector_ranking(retriever, query, depth)
    chunks = {c.id: c for ranked in (keyword, vector) for c, _ in ranked}
    # The semantic leg votes after the rules (``meaning``).
    leg = retriever.meaning
    nearest = leg.nearest(query.text, store, depth, retriever.warnings) if leg else []
    for chunk in nearest:
        chunks.setdefault(chunk.id, chunk)
    if not chunks:
        return Ranking([], [])
    fusion = _fused(retriever, query, chunks, keyword, vector)
    context = Context(query, store, retriever.state, chunks, fusion, depth, [c.id for c in nearest])
    ledger = Ledger()

    def listed(order: list[str], scores: Scores) -> list[Result]:
        results = (Result(chunks[key], scores[key], ledger.terms(key)) for key in order)
        return dedup_overlapping(results)[:limit]

    scores = _run(SHARED, context, ledger)
    evidence = listed(best_first(scores), scores)
    scores = _run(SEARCH_ONLY, context, ledger, scores)
    return Ranking(listed(list(scores), scores), evidence)  # ``scale`` lists them best first


def _fused(
    retriever: Retriever,
    query: Query,
    chunks: dict[str, Chunk],
    keyword: list[tuple[Chunk, float]],
    vector: list[tuple[Chunk, float]],
) -> Fusion:
    """The keyword, fields and vector rankings fused, each share divided by the best possible
    fused score (1.0: ranked first by every ranking that ran)."""
    # The candidates ranked again with their fields told apart (:mod:`.fields`), for a query in
    # words: one that types identifiers is decided by the chunks holding them.
    fielded = 0.0 if query.names else WEIGHTS.fields_fusion
    by_fields = field_ranking(chunks, query.text, retriever.state.idf) if fielded else []
    lists = [
        ([c.id for c, _ in keyword], 1.0),
        (by_fields, fielded),
        ([c.id for c, _ in vector], retriever.vector_weight),
    ]
    rankings = [(ranked, w) for ranked, w in lists if ranked]
    fused = rrf([r for r, _ in rankings], weights=[w for _, w in rankings])
    # Ranked first by the keyword search and by the fields: the lexical best (when they found
    # nothing, the vectors' first is no 1.0).
    lexical_best = (1.0 + fielded) / (WEIGHTS.rrf_k + 1)
    best = lexical_best + (retriever.vector_weight if vector else 0.0) / (WEIGHTS.rrf_k + 1)
    scores = {key: value / best for key, value in fused.items()}
    by_keyword = {k: v / best for k, v in rrf([lists[0][0]]).items()}
    by_field = {k: v / best for k, v in rrf([by_fields], weights=[lists[1][1]]).items()}
    return Fusion(
        keyword={key: by_keyword.get(key, 0.0) for key in scores},
        lexical={key: by_keyword.get(key, 0.0) + by_field.get(key, 0.0) for key in scores},
        fused=scores,
        vector=bool(vector),
        floor=lexical_best / best,  # where the keyword search's first starts
    )


def _run(
    rules: tuple[Rule, ...], context: Context, ledger: Ledger, scores: Scores | None = None
) -> Scores:
    """``rules`` in order, each that applies through ``ledger`` (a result's terms add up to its
    score); from the fusion when no ``scores`` are given."""
    shares: Scores = {}
    scores = context.fusion.fused if scores is None else scores
    for rule in rules:
        if not rule.applies(context):
            continue
        if rule.share:
            shares = ledger.step(rule.name, shares, rule.apply(context, shares))
        else:
            scores = ledger.step(rule.name, scores, rule.apply(context, scores))
    return scores
