"""Every weight of ranking in one table (:class:`Weights`, read as ``WEIGHTS``).

``search`` (:meth:`.retriever.Retriever.search`) and the question rerank
(:func:`.candidates.rerank_signals`) read their terms from here and nowhere else; each term a
result carries (``Result.terms``, ``codecite search --explain``) is named after the weight that
made it. Chosen with bench/eval_retrieval.py, bench/eval_questions.py, bench/chunk_loop.py and
the development benchmarks (README, Measured); change one and measure all of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


def _supporting() -> Mapping[str, float]:
    return MappingProxyType(
        {"test": 0.35, "doc": 0.35, "changelog": 0.2, "example": 0.45, "config": 0.45}
    )


def _fields() -> Mapping[str, float]:
    return MappingProxyType(
        {"name": 3.0, "path": 1.0, "defines": 3.0, "code": 1.0, "prose": 0.7, "strings": 0.5}
    )


def _fields_b() -> Mapping[str, float]:
    return MappingProxyType(
        {"name": 0.0, "path": 0.0, "defines": 0.0, "code": 0.5, "prose": 0.3, "strings": 0.3}
    )


@dataclass(frozen=True)
class Weights:
    # -- search: rank fusion ------------------------------------------------------------------
    # Cormack et al.'s constant: dampens the weight of the very first ranks.
    rrf_k: int = 60
    # The vector ranking's weight in the fusion (keyword: 1.0): keeps a keyword hit ahead of a
    # chunk that is merely similar (0.5 and 1.0 are within noise on bench/eval_retrieval.py).
    vector: float = 0.5
    # A vector hit less similar than this (cosine) is noise: unseen words land near 0.15.
    min_similarity: float = 0.2
    # The semantic leg (MiniLM vectors, :func:`.scoring.reordered_by_meaning`) votes after the
    # rules, the rules' order dominant: plain RRF of the two lowered chunk NDCG (0.822 ->
    # 0.766) on the peer benchmark's held-out repositories, this kept it (0.827) and raised
    # natural questions' MRR 0.573 -> 0.683 (issue 39). The rules' order: k = 10, ...
    meaning_rules_k: int = 10
    # ... the vectors' nearest: k = 60, with this weight (a query typing identifiers: the next).
    meaning_k: int = 60
    meaning: float = 0.5
    meaning_named: float = 0.3
    # A MiniLM neighbour less similar than this (cosine) is no vote: unrelated chunks of a
    # repository land at 0.2 and below, the code a question is about at 0.5 and above.
    meaning_min_similarity: float = 0.3
    # The fields ranking's weight in the fusion (:mod:`.fields`): the candidates the index found
    # ranked again by BM25F, a name saying a word counting more than a body repeating it. A
    # query typing identifiers has none (they decide; 0.2-0.5 cost eval-dev 0.01 MRR there).
    fields_fusion: float = 0.5
    # BM25F: how much one occurrence of a term in each field counts (the file's name, its
    # folders, the names the chunk defines, its code's identifiers, comments and docstrings,
    # string literals) ...
    fields: Mapping[str, float] = field(default_factory=_fields)
    # ... how far each field's length is normalised against the pool's mean (0: not at all;
    # names and prose are short by nature, so only code is normalised in earnest) ...
    fields_b: Mapping[str, float] = field(default_factory=_fields_b)
    # ... and where a term's weighed frequency saturates (2.0 over 1.2: +0.003 on semble-dev).
    fields_k1: float = 2.0
    # Candidates taken from each ranking: this many times the results asked for, at least
    # ``depth_min`` (fusion and the code-first weights need a deep pool).
    depth_factor: int = 3
    depth_min: int = 50

    # -- search: evidence of the query's names ------------------------------------------------
    # A chunk defining a plain word of the query ("retry": `def retry`) is scaled by this.
    named_lift: float = 1.3
    # A chunk defining a name the query gives as typed (`Router`, `field_validator`) is scaled
    # by this: the definition comes before the chunks that use, import or test it.
    defines_lift: float = 2.0
    # A packaging question (:mod:`.manifests`): the root manifests' chunks start where the
    # keyword search's first does, scaled by this.
    manifest_lift: float = 1.5
    # Code first: a chunk that is not code is scaled by its role's weight unless asked for.
    supporting: Mapping[str, float] = field(default_factory=_supporting)
    # A look-up (a query of identifiers alone): a chunk holding none of them verbatim weighs
    # this, so centrality or a neighbour's loan cannot lift it over one that holds them.
    lookup_miss: float = 0.5

    # -- search: evidence of the file ---------------------------------------------------------
    # A file named for the query's words (`cors.go` for "CORS middleware") is lifted by up to
    # this: its name says what it is for, a small file says the words few times (:mod:`.filenames`).
    file_name: float = 0.7
    # A file of an old or duplicate tree (`v1/`, `legacy/`, `_vendor/`) not asked for is scaled
    # by this: the current module answers first (:mod:`.legacy`).
    legacy: float = 0.5
    # What the most central file's scores gain (PageRank percentile, :mod:`.centrality`).
    centrality_lift: float = 0.22
    # PageRank damping: a random reader follows a reference 85% of the time.
    damping: float = 0.85
    # A name defined in more files than this gives no edges (`get`, `run`, `__init__`).
    max_definers: int = 8
    # A chunk gains this share of the best other candidate of its file.
    file_share: float = 0.2
    # The best candidates whose neighbouring chunks are scored (:mod:`.neighbours`).
    neighbour_lenders: int = 10
    # The share of a candidate's score lent to each chunk beside it ...
    neighbour_share: float = 0.45
    # ... staying under this fraction of the best lender's (the order of files is kept).
    neighbour_cap: float = 0.9
    # A header-and-docstring chunk whose body follows keeps this share of its score; the body
    # takes the unit's best (:mod:`.description`): the code doing the work is shown first.
    description: float = 0.9
    # Each further chunk of one file is scaled by this once more (files do not crowd).
    file_repeat: float = 0.8

    # -- the question rerank (:func:`.candidates.rerank_signals`) ----------------------------
    # Relevance = coverage x (base + (1 - base) x search score): calibrated for the floor.
    relevance_base: float = 0.75
    # An identifier the question names weighs this many times its rarest word.
    identifier_idf: float = 2.0
    # The share of the search's score as ``codecite search`` shows it (its order: code first,
    # named definitions, file evidence, each further chunk of a file a little less).
    search: float = 0.25
    # The share of the question's words the chunk's symbol holds.
    symbol_words: float = 0.15
    # The share of the question's words its path holds.
    path_words: float = 0.10
    # The share of the question's identifiers the chunk holds verbatim.
    exact: float = 0.15
    # How well the chunk's own definitions are named by the question (:class:`.names.NameMatch`).
    name: float = 2.0
    # Taken from a chunk that is not code, not asked for: code first.
    not_code: float = 0.15
    # The file being edited first (context reorders near-equals; it is never evidence).
    context_path: float = 0.20
    # A chunk holding the symbol under the cursor.
    context_symbol: float = 0.15
    # The share of its best caller's evidence a called definition inherits.
    callee_share: float = 0.85
    # The MiniLM cosine's weight next to the rerank score (:mod:`.semantic`): larger gained a
    # little but let the model outvote a method the question names.
    semantic: float = 1.0

    # -- the question path's extra candidates (:mod:`.candidates`) ---------------------------
    # Chunks followed from the question's names (callers) and from the best chunks (callees).
    follow_limit: int = 6
    # The best results' first files whose chunks the question names this well join the pool,
    sibling_files: int = 3
    sibling_match: float = 0.2
    # ... at most this many, the best named first.
    sibling_limit: int = 6
    # Search's first results for the question each keep a place in the prompt: the prompt's
    # sources come from the ranking ``codecite search`` shows (:func:`.selection.select_sources`).
    search_kept: int = 3
    # Half of a name's match is how much of the question it says, half how much of the name
    # the question explains: `merge` for "merge sorted inputs" beats `merge_sorted_runs`.
    name_precision: float = 0.5


WEIGHTS = Weights()
