"""Retrieval: keyword + vector candidates fused by reciprocal rank fusion, the definitions the
query names, code first; then, for questions, the code those lead to and the named chunks of
their files (:mod:`.candidates`), a cheap rerank, a relevance floor and the prompt's sources
(:mod:`.selection`).

Scores (every weight is in :mod:`.weights`; each rule's share is kept in ``Result.terms``):
- ``search``: ``Result.score`` starts as the fused RRF score divided by its best possible value
  (1.0: ranked first by every ranking that ran: the keyword search, the same candidates ranked by
  their fields (BM25F, :mod:`.fields`, for a query typing no identifier) and the vectors): the
  ``keyword``, ``fields`` and ``vector`` terms. A chunk defining a name the query gives starts at
  least where the keyword search's first would (a plain word that names a definition lifts it by
  ``named_lift``: ``named``). When the query holds identifiers, the score is the mean of that and
  the share of them the chunk holds verbatim (``identifiers``); it is scaled by ``supporting``
  for docs, tests, changelogs, examples and configuration not asked for (``code_first``), lifted
  by up to ``centrality_lift`` by its file's place in the reference graph (:mod:`.centrality`),
  scaled by ``legacy`` in an old or duplicate tree not asked for (:mod:`.legacy`),
  and gains ``file_share`` of the best other candidate of its file (``file``); the chunks beside
  the best candidates are scored from theirs (:mod:`.neighbours`), and each further chunk of a
  file is scaled by ``file_repeat`` once more. A chunk defining a name the query gives as typed
  is scaled by ``defines_lift`` (``defines``). The semantic leg's nearest chunks (MiniLM,
  :mod:`.meaning`) then reorder the rules' ranking (``meaning``,
  :func:`.scoring.reordered_by_meaning`). Divided by the best score when it is over 1
  (``scale``): never clamped, so unequal evidence stays unequal.
- ``retrieve``: the same search pass (:class:`Ranking`): its pool at the scores before
  ``file_repeat`` and ``scale``, its ``search`` term and search's first three (which keep their
  places in the prompt, :func:`.selection.select_sources`) read from the list as shown.
  ``Result.score`` is the calibrated relevance in [0, 1] (see ``relevance``); the floor
  (config.relevance_floor) is applied to it. Its terms add up to the rerank score that ordered
  the candidates (:func:`.candidates.rerank_signals`, ``callee``, ``semantic``). Which rules
  each path reads: docs/how-it-works.md, Retrieval.

Over 500 lines because it is one job, the Retriever: its read paths (search, retrieve, a
symbol's, a range's, callers) run on one pinned index version and share its memoised state
(compounds, idf, centrality); every scoring rule already lives in a module of its own.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from ..core.environment import apply_defaults
from ..core.records import Chunk, Result, content_hash, findings_within
from ..core.terms import (
    NOT_AFTER_WORD,
    NOT_BEFORE_WORD,
    asked_roles,
    assignment,
    is_test_path,
    whole_word,
    word_parts,
    word_pattern,
)
from ..index.embedder import Embedder, EmbeddingError
from ..index.embedding import make_embedder, make_word_model, minilm_cache
from ..index.minilm import CHUNK_TOKENS
from ..index.static_embedding import StaticEmbedder
from ..ingest.languages import is_code

if TYPE_CHECKING:
    from ..core.config import Config
    from ..index.layered import LayeredStore
    from ..index.store import Store

from .candidates import QuestionFiles, RetrievalContext, rerank_signals
from .centrality import central_weight
from .description import asks_what, bodies_first, bodies_first_reranked
from .fields import field_ranking
from .filenames import named_files
from .ledger import Ledger
from .legacy import asked_for, legacy_files
from .manifests import MANIFESTS, asks_packaging
from .meaning import MeaningLeg
from .names import (
    Compounds,
    NameMatch,
    exact_share,
    given_names,
    identifiers,
    named_in,
    qualifiers,
    reexported,
    words_of,
)
from .neighbours import neighbour_scores, spread_over_files
from .on_disk import OnDisk, on_disk
from .prior import CentralityPrior
from .scoring import (
    Signals,
    reordered_by_meaning,
    role_weight,
    rrf,
    search_depth,
    search_score,
    with_file_evidence,
)
from .selection import (
    LeftOut,
    Selection,
    dedup_overlapping,
    left_out_of,
    merge_adjacent,
    overlaps,
    select_sources,
)
from .semantic import SemanticRanker, make_ranker
from .weights import WEIGHTS

log = logging.getLogger(__name__)


@dataclass
class Retrieval:
    selected: list[Result]  # what the prompt shows, merged, within the token budget
    candidates: list[Result]  # every reranked candidate, best first (for refusals)
    cleared_floor: bool
    warnings: list[str] = field(default_factory=list)
    # What was chosen, checked against the working tree (:mod:`.on_disk`): None unchecked.
    on_disk: OnDisk | None = None
    # The question path's: search's first results not wholly in the prompt, each with the
    # rule that left it out (the trace records them).
    search_left_out: list[LeftOut] = field(default_factory=list)


@dataclass(frozen=True)
class Ranking:
    """One search's ranking read two ways: ``shown``, what ``codecite search`` lists (each
    further chunk of a file scaled by ``file_repeat``, the scores scaled into (0, 1]); and
    ``evidence``, the same candidates before those two rules, each at the score its evidence
    made (the question path's pool: it wants a definition's neighbours in it, and calibrates
    its relevance on those scores)."""

    shown: list[Result]
    evidence: list[Result]


_P = ParamSpec("_P")
_T = TypeVar("_T")


def _asked(query: str) -> frozenset[str]:
    """The roles beyond code a query asks for: a packaging question's manifests whatever their
    role (`pyproject.toml` is configuration)."""
    asked = asked_roles(query)
    return asked | {"config"} if asks_packaging(query) else asked


def _one_version(
    method: Callable[Concatenate[Retriever, _P], _T],
) -> Callable[Concatenate[Retriever, _P], _T]:
    """The call reads one version of the index (see ``Store.pinned``): its many look-ups do
    not each ask LanceDB for the latest version."""

    @functools.wraps(method)
    def pinned(self: Retriever, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        with self.store.pinned():
            return method(self, *args, **kwargs)

    return pinned


class Retriever:
    def __init__(
        self,
        store: Store | LayeredStore,
        embedder: Embedder | None,
        config: Config,
        vector_weight: float = WEIGHTS.vector,
        semantic: SemanticRanker | None = None,
        repo: Path | None = None,
        words: StaticEmbedder | None = None,
        meaning: MeaningLeg | None = None,
    ) -> None:
        self.store = store
        # The working tree: what a caller is handed is checked against it (:mod:`.on_disk`).
        # None (a benchmark of the ranking alone): handed as the index has it.
        self.repo = repo
        self.embedder = embedder
        # The corpus's word statistics: the static embedder's when it makes the vectors.
        self.words = embedder if isinstance(embedder, StaticEmbedder) else words
        self.config = config
        self.vector_weight = vector_weight
        self.semantic = semantic
        self.meaning = meaning
        self.warnings: list[str] = []
        self._has_vectors: str | None = None  # embedder name known to have stored vectors
        self.prior = CentralityPrior(store.references)
        self._compounds: tuple[object, Compounds] | None = None  # (its vocabulary's model, ...)
        self._legacy: tuple[dict[str, float], dict[str, str]] | None = None  # (centrality, ...)

    # -- hybrid search --------------------------------------------------------------------

    def _vector_ranking(self, query: str, limit: int) -> list[tuple[Chunk, float]]:
        embedder = self.embedder
        if embedder is None:
            return []
        if isinstance(embedder, StaticEmbedder) and (
            embedder.model is None or not word_parts(query)
        ):
            return []  # untrained, or a query without words ("((((") has nothing to compare
        try:
            if embedder.name != self._has_vectors:
                if self.store.vector_count(embedder.name) == 0:
                    return []
                self._has_vectors = embedder.name  # vectors never vanish: count once per name
            vector = embedder.embed([query])[0]
        except EmbeddingError as exc:  # keyword results still answer
            message = f"vector search skipped: {exc}"
            if message not in self.warnings:
                self.warnings.append(message)
                log.warning(message)
            return []
        found = self.store.vector_search(embedder.name, vector, limit)
        return [
            (chunk, similarity)
            for chunk, similarity in found
            if similarity >= WEIGHTS.min_similarity
        ]

    @_one_version
    def search(self, query: str, limit: int = 10) -> list[Result]:
        """Best first; empty for an empty query; keyword-only when no vectors exist yet."""
        return self._ranking(query, limit).shown

    def _ranking(self, query: str, limit: int) -> Ranking:
        """One search's ranking, read two ways (:class:`Ranking`)."""
        if not query.strip():
            return Ranking([], [])
        if self.words is not None:
            self.words.refresh()  # the indexer may have (re)trained it since we opened
        depth = search_depth(limit)
        keyword = self.store.keyword_search(query, depth)
        vector = self._vector_ranking(query, depth)
        chunks = {c.id: c for ranked in (keyword, vector) for c, _ in ranked}
        # The semantic leg votes after the rules (``meaning`` below).
        nearest = (
            self.meaning.nearest(query, self.store, depth, self.warnings) if self.meaning else []
        )
        for chunk in nearest:
            chunks.setdefault(chunk.id, chunk)
        meaning = [c.id for c in nearest]
        if not chunks:
            return Ranking([], [])
        names = identifiers(query)
        # The candidates ranked again with their fields told apart (:mod:`.fields`), for a
        # query in words: one that types identifiers is decided by the chunks holding them.
        fielded = 0.0 if names else WEIGHTS.fields_fusion
        by_fields = field_ranking(chunks, query, self._idf) if fielded else []
        lists = [
            ([c.id for c, _ in keyword], 1.0),
            (by_fields, fielded),
            ([c.id for c, _ in vector], self.vector_weight),
        ]
        rankings = [(ranked, w) for ranked, w in lists if ranked]
        fused = rrf([r for r, _ in rankings], weights=[w for _, w in rankings])
        # Ranked first by the keyword search and by the fields: the lexical best (when they
        # found nothing, the vectors' first is no 1.0).
        lexical_best = (1.0 + fielded) / (WEIGHTS.rrf_k + 1)
        best = lexical_best + (self.vector_weight if vector else 0.0) / (WEIGHTS.rrf_k + 1)
        asked = _asked(query)
        # A query of identifiers alone looks a name up: where it lives matters more than its role.
        names_only = bool(names) and all(identifiers(word) for word in query.split())
        scores = {key: value / best for key, value in fused.items()}
        # Each rule below goes through the ledger: a result's terms add up to its score.
        ledger = Ledger()
        by_keyword = {k: v / best for k, v in rrf([lists[0][0]]).items()}
        by_field = {k: v / best for k, v in rrf([by_fields], weights=[lists[1][1]]).items()}
        lexical = {key: by_keyword.get(key, 0.0) + by_field.get(key, 0.0) for key in scores}
        ledger.step("keyword", {}, {key: by_keyword.get(key, 0.0) for key in scores})
        ledger.step("fields", {key: by_keyword.get(key, 0.0) for key in scores}, lexical)
        if vector:  # (without, the difference is rounding noise)
            ledger.step("vector", lexical, scores)
        floor = lexical_best / best  # where the keyword search's first starts
        lifted_scores, defined = self._named(query, scores, chunks, floor, depth, names_only)
        scores = ledger.step("named", scores, lifted_scores)
        scores = ledger.step("defines", scores, {**scores, **defined})
        if asks_packaging(query):
            scores = ledger.step("manifest", scores, self._manifests(scores, chunks, floor))
        exacts = {key: exact_share(names, chunks[key].text) for key in scores}
        scores = ledger.step(
            "identifiers",
            scores,
            {key: search_score(value, exacts[key]) for key, value in scores.items()},
        )
        scores = ledger.step(
            "code_first",
            scores,
            {
                key: value * role_weight(chunks[key], asked, exacts[key] if names_only else None)
                for key, value in scores.items()
            },
        )
        centrality = self._centrality()
        scores = ledger.step(
            "centrality",
            scores,
            {
                key: value * central_weight(centrality.get(chunks[key].path))
                for key, value in scores.items()
            },
        )
        # A look-up whose names are defined (or re-exported) here is answered by those
        # chunks: a file named for the name's words (`map_request.rs` for `FromRequest`) is not.
        if not (names_only and defined):
            scores = ledger.step("file_name", scores, named_files(scores, chunks, query, asked))
        old = self._legacy_files(centrality)
        scores = ledger.step(
            "legacy",
            scores,
            {
                key: value * WEIGHTS.legacy
                if (folder := old.get(chunks[key].path)) and not asked_for(folder, query)
                else value
                for key, value in scores.items()
            },
        )
        scores = ledger.step("file", scores, with_file_evidence(scores, chunks))
        scores = ledger.step("neighbours", scores, self._with_neighbours(scores, chunks))
        if not asks_what(query):
            scores = ledger.step("description", scores, bodies_first(scores, chunks))
        if meaning:
            weight = WEIGHTS.meaning_named if names else WEIGHTS.meaning
            reordered = reordered_by_meaning(
                scores, meaning, weight, lambda key: role_weight(chunks[key], asked)
            )
            scores = ledger.step("meaning", scores, reordered)
        by_evidence = sorted(scores, key=lambda key: (-scores[key], key))
        evidence = dedup_overlapping(
            Result(chunks[key], scores[key], ledger.terms(key)) for key in by_evidence
        )[:limit]
        scores = ledger.step("file_repeat", scores, spread_over_files(scores, chunks))
        ordered = sorted(scores, key=lambda key: (-scores[key], key))
        # Scaled, not clamped, into (0, 1]: unequal evidence stays unequal.
        top = max(1.0, scores[ordered[0]])
        scaled = {key: scores[key] / top for key in ordered}
        ledger.step("scale", scores, scaled)
        results = (Result(chunks[key], scaled[key], ledger.terms(key)) for key in ordered)
        return Ranking(dedup_overlapping(results)[:limit], evidence)

    def results(self, query: str, limit: int = 10) -> list[Result]:
        """What a user is shown for ``query``: :meth:`search`, less any result whose file no
        longer holds its lines."""
        return self._current(self.search(query, limit)).kept

    def _current(self, results: list[Result]) -> OnDisk:
        if self.repo is None:
            return OnDisk(results, [])
        return on_disk(self.repo, self.config, results)

    def _named(
        self,
        query: str,
        scores: dict[str, float],
        chunks: dict[str, Chunk],
        floor: float,
        depth: int,
        names_only: bool,
    ) -> tuple[dict[str, float], dict[str, float]]:
        """The names a query gives that the index defines (their chunks join ``chunks``):
        (every score with those definitions brought in, as if the keyword search had ranked
        them first, or a plain word that is also a definition's name lifting it a little:
        "retry" and `def retry`; the scores of the chunks defining a name the query gives as
        typed, lifted by ``defines_lift`` so that they come before the chunks that use it)."""
        named, worded = named_in(query)
        given = given_names(query)
        lifted = dict(scores)
        defined: dict[str, float] = {}
        found = self.store.naming(named | worded | given, depth)
        # In a sentence, a name many files define says less about which one is meant
        # (`flatMap`); a look-up wants every definition of it.
        definers = {c.path for c in found if given.intersection(c.defines)}
        spread_by = 1 if names_only or " " not in query.strip() else max(1, len(definers))
        lift = 1.0 + (WEIGHTS.defines_lift - 1.0) / spread_by
        for chunk in found:
            exact = bool((named | given).intersection(chunk.defines))
            chunks.setdefault(chunk.id, chunk)
            word_lift = 1.0 if exact else WEIGHTS.named_lift
            lifted[chunk.id] = max(lifted.get(chunk.id, 0.0), floor if exact else 0.0) * word_lift
            if given.intersection(chunk.defines):
                defined[chunk.id] = lifted[chunk.id] * lift
        # A name the index does not define (a dependency's): the chunk re-exporting it is where
        # the module makes it its own, and stands in for the definition.
        undefined = given - {name for chunk in found for name in chunk.defines}
        for key, chunk in chunks.items():
            if undefined and is_code(chunk.path) and reexported(undefined, chunk.path, chunk.text):
                lifted[key] = max(lifted.get(key, 0.0), floor)
                defined[key] = lifted[key] * lift
        return lifted, defined

    def _manifests(
        self, scores: dict[str, float], chunks: dict[str, Chunk], floor: float
    ) -> dict[str, float]:
        """The root manifests' chunks (they join ``chunks``) scored as if the keyword search had
        ranked them first: a packaging question's place (:mod:`.manifests`)."""
        lifted = dict(scores)
        for path in MANIFESTS:
            for chunk in self.store.chunks_for_path(path):
                chunks.setdefault(chunk.id, chunk)
                lifted[chunk.id] = max(lifted.get(chunk.id, 0.0), floor) * WEIGHTS.manifest_lift
        return lifted

    def _centrality(self) -> dict[str, float]:
        """Each file's percentile in the reference graph (:mod:`.prior`)."""
        return self.prior.at(self.store.chunks_version())

    def _legacy_files(self, centrality: dict[str, float]) -> dict[str, str]:
        """The files of old and duplicate trees (:mod:`.legacy`), found once per prior (whose
        files are the repository's code)."""
        if self._legacy is None or self._legacy[0] is not centrality:
            self._legacy = (centrality, legacy_files(centrality.keys()))
        return self._legacy[1]

    def _with_neighbours(
        self, scores: dict[str, float], chunks: dict[str, Chunk]
    ) -> dict[str, float]:
        """The chunks beside the best candidates, scored by :func:`.neighbours.neighbour_scores`
        (one store read)."""
        top = sorted(scores, key=lambda key: (-scores[key], key))[: WEIGHTS.neighbour_lenders]
        lenders = {key: (chunks[key], scores[key]) for key in top}
        spans = {(c.path, c.start_line, c.end_line) for c, _ in lenders.values()}
        found = self.store.adjacent(spans)
        lent = neighbour_scores(lenders, found)
        for chunk in found:
            if chunk.id in lent:
                chunks.setdefault(chunk.id, chunk)
        return {**scores, **lent}

    # -- questions ------------------------------------------------------------------------

    def _split(self) -> Compounds:
        """Compound names split against the word statistics' vocabulary (the corpus's own
        words); without that model, names are not split."""
        model = self.words.model if self.words is not None else None
        if self._compounds is None or self._compounds[0] is not model:
            vocabulary = model.vocab if model is not None else {}
            self._compounds = (model, Compounds(vocabulary.__contains__))
        return self._compounds[1]

    def _idf(self, word: str) -> float:
        if self.words is not None:
            return self.words.idf(word)
        return 1.0  # no corpus statistics (`embedding = "none"`): every word counts alike

    @_one_version
    def retrieve(self, question: str, context: RetrievalContext | None = None) -> Retrieval:
        """Candidates (the search's, plus the code they lead to), reranked; the prompt's sources
        chosen from them by :func:`.selection.select_sources`."""
        extra = [*context.extra_terms, context.symbol or ""] if context else []
        query = " ".join([question, *extra]).strip()
        ranking = self._ranking(query, self.config.candidates)
        fused = ranking.evidence
        # The rerank reads the search's order as shown (one ranking): a candidate it does not
        # list (one followed from the best) places as its last.
        shown = {r.chunk.id: r.score for r in ranking.shown}
        unlisted = min(shown.values(), default=0.0)
        files = QuestionFiles(self.store)
        callees, callers = files.followed(question, fused)
        terms = {word: self._idf(word) for word in word_parts(question)}
        typed = identifiers(question)
        asked = _asked(question)
        # The words the name rule matches: not those of a dotted name's qualifiers (a question
        # about `Session.send` is not about the definitions named "session").
        qualifying = words_of(" ".join(qualifiers(question)))
        named = NameMatch(
            {t: idf for t, idf in terms.items() if t not in qualifying}, self._split()
        )

        def signals(result: Result) -> Signals:
            placed = shown.get(result.chunk.id, unlisted)
            return rerank_signals(result, placed, terms, typed, context, asked, named)

        siblings = files.named_siblings(fused, named)
        # Search's first results are candidates whatever their evidence's rank (below).
        listed = ranking.shown[: WEIGHTS.search_kept]
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
        if not asks_what(question):
            scored = bodies_first_reranked(scored)
        scored.sort(key=lambda pair: -pair[1].rerank)
        if self.semantic is not None:  # the question-time MiniLM rerank (:mod:`.semantic`)
            weighed = [(r, s.rerank, role_weight(r.chunk, asked)) for r, s in scored]
            ranks, added = self.semantic.ranked(question, weighed, self.warnings)
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
                max_sources=self.config.context_chunks,
                token_budget=self.config.context_tokens,
                floor=self.config.relevance_floor,
                asked=asked,
                terms=terms,
                headers_for=files.headers,
                kept=[r for r in kept if r.chunk.id in ids],
            )

        selection = select(candidates)
        checked = self._current(selection.sources)
        if checked.left:  # a file changed since it was indexed: choose again without it
            gone = {r.chunk.path for r in checked.left}
            selection = select([r for r in candidates if r.chunk.path not in gone])
            again = self._current(selection.sources)
            checked = OnDisk(again.kept, checked.left + again.left, checked.forged or again.forged)
        selected = checked.kept
        changed = {r.chunk.path for r in checked.left}
        left_out = left_out_of(listed, selection, selected, changed)
        return Retrieval(
            selected=selected,
            candidates=candidates,
            cleared_floor=bool(selected),
            warnings=list(self.warnings),
            on_disk=checked,
            search_left_out=left_out,
        )

    @_one_version
    def retrieve_for_symbol(
        self,
        name: str,
        definition_path: str | None = None,
        limit: int = 6,
        *,
        uses: bool = True,
        line: int | None = None,
    ) -> Retrieval:
        """Hover seeding: the chunk(s) defining ``name`` (in ``definition_path`` when given; first
        the one holding its ``line`` where it gives the name a value: a function's local), then
        (``uses``) the chunks calling it (the ``uses`` column), then other code naming it as a
        whole word (an import, a callback passed along): never docs or plain text."""
        last = name.rsplit(".", 1)[-1]
        if not last.strip():
            return Retrieval(selected=[], candidates=[], cleared_floor=False)

        # The chunker's queries find definitions; a module-level assignment is one too here
        # (`TIMEOUT = 30`, `var res = Object.create(...)`).
        assigned = assignment(last, top_level=True)

        def defines(chunk: Chunk) -> bool:
            # Code only: a README's example (`name := c.PostForm("name")`) defines nothing.
            return is_code(chunk.path) and (
                last in chunk.defines or assigned.search(chunk.text) is not None
            )

        local = self.store.chunks_for_path(definition_path) if definition_path else []
        given_here = assignment(last)
        here = [
            c
            for c in local
            if line is not None
            and c.start_line <= line <= c.end_line
            and (defines(c) or given_here.search(c.text))
        ]
        found = [c for c, _ in self.store.keyword_search(last, self.config.candidates)]
        # Those the chunker's queries name, wherever the keyword search ranked them.
        named_there = self.store.naming([last], self.config.candidates)
        definitions = here + [c for c in [*local, *found, *named_there] if defines(c)]
        if not definitions:
            # A module-level value used in many places (`TimeoutTypes = Union[...]`, imported
            # and annotated all over httpx) ranks below its uses: a wider look for its line.
            wider = self.store.keyword_search(last, _DEFINITION_SEARCH)
            definitions = [c for c, _ in wider if defines(c)]
        users = self._callers([last]) if uses else []
        named = [c for c in found if is_code(c.path) and whole_word(last, c.text)]
        others = [c for c in named if not defines(c)] if uses else []
        others.sort(key=lambda c: is_test_path(c.path))  # code before tests; stable
        ordered = [Result(c, 1.0) for c in definitions] + [
            Result(c, 0.5) for c in [*users, *others]
        ]
        checked = self._current(dedup_overlapping(ordered)[:limit])
        return Retrieval(
            selected=merge_adjacent(checked.kept),
            candidates=checked.kept,
            cleared_floor=bool(checked.kept),
            on_disk=checked,
        )

    def retrieve_lines(self, path: str, first: int, last: int) -> Retrieval:
        """The chunks of ``path`` holding its lines ``first``..``last`` (a hovered function's
        own), as they are on disk."""
        held = [
            Result(c, 1.0)
            for c in self.store.chunks_for_path(path)
            if c.start_line <= last and first <= c.end_line
        ]
        checked = self._current(sorted(held, key=lambda r: r.chunk.start_line))
        return Retrieval(
            selected=merge_adjacent(checked.kept),
            candidates=checked.kept,
            cleared_floor=bool(checked.kept),
            on_disk=checked,
        )

    @_one_version
    def callers(self, names: list[str], limit: int = 6) -> Retrieval:
        """The lines calling ``names`` (a few around each call), the first name's first: in the
        chunks whose ``uses`` hold one, then in those defining one (a small file is one chunk),
        code before tests. Where "where is that called?" after an answer about them looks: a
        call site, not the definition again."""
        windows: list[Result] = []
        for name in dict.fromkeys(n.rsplit(".", 1)[-1] for n in names if n.strip()):
            defining = self.store.naming([name], self.config.candidates)
            users = self._callers([name])
            calls = [w for chunk in [*users, *sorted(defining, key=_test_last)]
                     for w in _call_windows(chunk, name)]  # fmt: skip
            # Never called: where it is used at all (an import, a re-export, a reference) is the
            # answer, not unrelated code the question's other words happen to find.
            windows += calls or [
                w
                for chunk in users or self._mentioning(name)
                for w in _call_windows(chunk, name, False)
            ]
        checked = self._current(dedup_overlapping(windows)[:limit])
        found = checked.kept
        return Retrieval(
            selected=found, candidates=found, cleared_floor=bool(found), on_disk=checked
        )

    def _mentioning(self, name: str) -> list[Chunk]:
        """The chunks of the files the keyword search finds for ``name`` that say it (imports
        and references the ``uses`` column does not hold), code before tests."""
        paths = dict.fromkeys(r.chunk.path for r in self.search(name, limit=self.config.candidates))
        said = word_pattern(name)
        found = [
            c for path in paths for c in self.store.chunks_for_path(path) if said.search(c.text)
        ]
        return sorted(found, key=_test_last)

    def _callers(self, names: list[str]) -> list[Chunk]:
        found = self.store.naming(names, self.config.candidates, column="uses")
        return sorted(found, key=lambda c: is_test_path(c.path))  # code before tests; stable


_DEFINITION_SEARCH = 400  # chunks naming a symbol looked through for its module-level value
_DEFINING = re.compile(r"\s*(?:export\s+)?(?:async\s+)?(?:def|function|fn|func|class)\b")
_CALL_CONTEXT = 2  # lines kept on each side of a call


def _test_last(chunk: Chunk) -> bool:
    return is_test_path(chunk.path)


def _call_windows(chunk: Chunk, name: str, calls: bool = True) -> list[Result]:
    """The lines of ``chunk`` around each call of ``name`` (with ``calls`` False: each mention of
    it), never its definition, as results holding exactly those lines of the file, adjacent
    windows joined."""
    after = r"\s*\(" if calls else NOT_BEFORE_WORD
    call = re.compile(rf"{NOT_AFTER_WORD}{re.escape(name)}{after}")
    lines = chunk.text.splitlines(keepends=True)
    spans: list[list[int]] = []
    for i, line in enumerate(lines):
        if call.search(line) and not _DEFINING.match(line):
            first, last = max(0, i - _CALL_CONTEXT), min(len(lines) - 1, i + _CALL_CONTEXT)
            if spans and first <= spans[-1][1] + 1:
                spans[-1][1] = last
            else:
                spans.append([first, last])
    found = []
    for first, last in spans:
        text = "".join(lines[first : last + 1])
        start_byte = chunk.start_byte + len("".join(lines[:first]).encode("utf-8"))
        found.append(
            Result(
                replace(
                    chunk,
                    start_line=chunk.start_line + first,
                    end_line=chunk.start_line + last,
                    content_hash=content_hash(text),
                    text=text,
                    start_byte=start_byte,
                    end_byte=start_byte + len(text.encode("utf-8")),
                    untrusted=findings_within(
                        chunk.untrusted, chunk.start_line + first, chunk.start_line + last
                    ),
                ),
                0.5,
            )
        )
    return found


def open_retriever(repo: Path, config: Config, in_memory: bool = False) -> Retriever:
    """Open the repository's index (read-only use) and its embedder. ``in_memory`` (a process
    answering many queries: the server): answer them from an in-memory view of the index
    (:mod:`..index.view`), loaded in the background (seconds on a large index; LanceDB answers
    meanwhile) and kept in step with every write. A one-shot command reads LanceDB only."""
    apply_defaults()
    from ..index.layered import open_index  # lazy: lancedb takes seconds to import

    index_dir = config.resolved_index_dir(repo)
    store = open_index(repo, config, in_memory=in_memory)  # before the embedder: a base's model
    embedder = make_embedder(config, index_dir)
    words = make_word_model(config, index_dir, embedder)
    semantic = make_ranker(config.rerank, index_dir)
    meaning = (
        MeaningLeg(minilm_cache(index_dir, CHUNK_TOKENS)) if config.meaning == "minilm" else None
    )
    return Retriever(
        store, embedder, config, semantic=semantic, repo=repo, words=words, meaning=meaning
    )
