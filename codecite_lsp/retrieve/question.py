"""The question path (``Retriever.retrieve``): search's ranking (:mod:`.search`) and the code
it leads to (:mod:`.candidates`), a cheap rerank, the relevance floor and the prompt's sources
(:mod:`.selection`), checked against the files (:mod:`.on_disk`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..core.records import Result
from .candidates import QuestionFiles, RetrievalContext, rerank_signals
from .description import bodies_first_reranked
from .names import NameMatch
from .on_disk import OnDisk
from .query import Query
from .scoring import Signals, role_weight
from .search import ranking
from .selection import (
    LeftOut,
    Selection,
    dedup_overlapping,
    left_out_of,
    overlaps,
    select_sources,
)
from .weights import WEIGHTS

if TYPE_CHECKING:
    from .retriever import Retriever


@dataclass
class Retrieval:
    """What a question's retrieval hands on (a symbol's and a range's too, :mod:`.symbol`)."""

    selected: list[Result]  # what the prompt shows, merged, within the token budget
    candidates: list[Result]  # every reranked candidate, best first (for refusals)
    cleared_floor: bool
    warnings: list[str] = field(default_factory=list)
    # What was chosen, checked against the working tree (:mod:`.on_disk`): None unchecked.
    on_disk: OnDisk | None = None
    # The question path's: search's first results not wholly in the prompt, each with the
    # rule that left it out (the trace records them).
    search_left_out: list[LeftOut] = field(default_factory=list)


def retrieve(
    retriever: Retriever, question: str, context: RetrievalContext | None = None
) -> Retrieval:
    """Candidates (the search's, plus the code they lead to), reranked; the prompt's sources
    chosen from them by :func:`.selection.select_sources`."""
    asked = Query(question)
    extra = [*context.extra_terms, context.symbol or ""] if context else []
    searched = " ".join([question, *extra]).strip()
    ranked = ranking(
        retriever, asked if searched == question else Query(searched), retriever.config.candidates
    )
    fused = ranked.evidence
    # The rerank reads the search's order as shown (one ranking): a candidate it does not
    # list (one followed from the best) places as its last.
    shown = {r.chunk.id: r.score for r in ranked.shown}
    unlisted = min(shown.values(), default=0.0)
    files = QuestionFiles(retriever.store)
    callees, callers = files.followed(question, fused)
    terms = {word: retriever.state.idf(word) for word in asked.words}
    # The words the name rule matches: not those of a dotted name's qualifiers (a question
    # about `Session.send` is not about the definitions named "session").
    named = NameMatch(
        {t: idf for t, idf in terms.items() if t not in asked.qualifying}, retriever.state.split()
    )

    def signals(result: Result) -> Signals:
        placed = shown.get(result.chunk.id, unlisted)
        return rerank_signals(result, placed, terms, asked.names, context, asked.asked, named)

    siblings = files.named_siblings(fused, named)
    # Search's first results are candidates whatever their evidence's rank (below).
    listed = ranked.shown[: WEIGHTS.search_kept]
    pool = dedup_overlapping([*fused, *listed, *callers, *siblings])
    scored = [(r, signals(r)) for r in pool]
    # A definition the best chunks call inherits part of their evidence: the question is
    # about what they do, and it is done there.
    caller = max((s for _, s in scored[:2]), key=lambda s: s.rerank, default=None)
    for result in callees:
        own = signals(result)
        if caller is not None and not any(overlaps(result.chunk, r.chunk) for r, _ in scored):
            share = WEIGHTS.callee_share
            rerank = max(own.rerank, share * caller.rerank)
            inherited = Signals(
                relevance=max(own.relevance, share * caller.relevance),
                rerank=rerank,
                terms=(*own.terms, ("callee", rerank - own.rerank)),
            )
            scored.append((result, inherited))
    if not asked.asks_what:
        scored = bodies_first_reranked(scored)
    scored.sort(key=lambda pair: -pair[1].rerank)
    if retriever.semantic is not None:  # the question-time MiniLM rerank (:mod:`.semantic`)
        weighed = [(r, s.rerank, role_weight(r.chunk, asked.asked)) for r, s in scored]
        ranks, added = retriever.semantic.ranked(question, weighed, retriever.warnings)
        scored = [(scored[i][0], scored[i][1].plus("semantic", added[i])) for i in ranks]
    # The score shown is the calibrated relevance; the terms add up to the rerank score
    # that ordered the candidates (the trace records them).
    candidates = [replace(r, score=round(s.relevance, 4), terms=s.terms) for r, s in scored]

    # Search's first results keep their places in the prompt (:func:`.select_sources`).
    first = {r.chunk.id for r in listed}
    kept = [r for r in candidates if r.chunk.id in first]

    def select(pool: list[Result]) -> Selection:
        ids = {r.chunk.id for r in pool}
        return select_sources(
            pool,
            max_sources=retriever.config.context_chunks,
            token_budget=retriever.config.context_tokens,
            floor=retriever.config.relevance_floor,
            asked=asked.asked,
            terms=terms,
            headers_for=files.headers,
            kept=[r for r in kept if r.chunk.id in ids],
        )

    selection = select(candidates)
    checked = retriever.checked(selection.sources)
    if checked.left:  # a file changed since it was indexed: choose again without it
        gone = {r.chunk.path for r in checked.left}
        selection = select([r for r in candidates if r.chunk.path not in gone])
        again = retriever.checked(selection.sources)
        checked = OnDisk(again.kept, checked.left + again.left, checked.forged or again.forged)
    selected = checked.kept
    changed = {r.chunk.path for r in checked.left}
    left_out = left_out_of(listed, selection, selected, changed)
    return Retrieval(
        selected=selected,
        candidates=candidates,
        cleared_floor=bool(selected),
        warnings=list(retriever.warnings),
        on_disk=checked,
        search_left_out=left_out,
    )
