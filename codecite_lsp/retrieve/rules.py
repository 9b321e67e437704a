"""Search's ranking rules as data (pure but for the store reads of ``named``, ``manifest`` and
``neighbours``): each :class:`Rule` a name, the paths that read it, when it applies and what it
makes of the scores; :data:`RULES` in the order they run (:mod:`.search` runs them through the
:class:`.ledger.Ledger`, so a result's terms are named for them). Every weight is in
:mod:`.weights`; docs/how-it-works.md's table "Which rules each path reads" is
:func:`rules_table` (``python -m codecite_lsp.retrieve.rules --markdown``).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ..core.records import Chunk
from ..ingest.languages import is_code
from .centrality import central_weight
from .description import bodies_first
from .filenames import named_files
from .manifests import MANIFESTS
from .names import exact_share, reexported
from .neighbours import neighbour_scores, spread_over_files
from .query import Query
from .scoring import reordered_by_meaning, role_weight, search_score, with_file_evidence
from .state import RetrieverState
from .weights import WEIGHTS

if TYPE_CHECKING:
    from ..index.layered import LayeredStore
    from ..index.store import Store

PathName = Literal["search", "question", "hover"]
Scores = dict[str, float]  # chunk id -> score
PATHS: tuple[PathName, ...] = ("search", "question", "hover")


@dataclass(frozen=True)
class Fusion:
    """The fused score the rules start from and its shares, ranking by ranking (each adds one
    ranking to the one before)."""

    keyword: Scores  # the keyword search's share of every candidate's
    lexical: Scores  # and the fields' (BM25F)
    fused: Scores  # and the vectors': every ranking fused in one RRF
    vector: bool  # the vectors ranked any candidate
    floor: float  # where the keyword search's first starts


@dataclass
class Context:
    """What the rules read for one search. Not frozen: a rule that brings chunks in (``named``,
    ``manifest``, ``neighbours``) adds them to ``chunks``, and ``named`` leaves the definitions
    it lifted in ``defined`` for ``defines`` and ``file_name``."""

    query: Query
    store: Store | LayeredStore
    state: RetrieverState
    chunks: dict[str, Chunk]
    fusion: Fusion
    depth: int  # candidates taken from each ranking
    meaning: list[str]  # the semantic leg's nearest chunks, nearest first
    defined: Scores = field(default_factory=dict)
    _exact: dict[str, float | None] = field(default_factory=dict, init=False, repr=False)

    @functools.cached_property
    def centrality(self) -> dict[str, float]:
        return self.state.centrality()

    @functools.cached_property
    def legacy(self) -> dict[str, str]:
        return self.state.legacy_files(self.centrality)

    def exact(self, key: str) -> float | None:
        """The share of the typed identifiers the chunk holds verbatim (two rules read it)."""
        if key not in self._exact:
            self._exact[key] = exact_share(self.query.names, self.chunks[key].text)
        return self._exact[key]


@dataclass(frozen=True)
class Rule:
    name: str  # its term in a result's ``terms``
    does: str  # what it does, for the docs' table
    paths: frozenset[PathName]  # the paths that read its scores
    apply: Callable[[Context, Scores], Scores]
    applies: Callable[[Context], bool] = lambda context: True
    # A share of the fused start (keyword, fields, vector): recorded as a term, while the rules
    # after start from the fusion itself (the shares add up to it but for rounding).
    share: bool = False


def _named(context: Context, scores: Scores) -> Scores:
    """Every score with the definitions of the names the query gives brought in (they join
    ``chunks``) as if the keyword search had ranked them first, or a plain word that is also a
    definition's name lifting it a little ("retry" and `def retry`); ``context.defined``: the
    chunks defining a name the query gives as typed, lifted by ``defines_lift`` so that they
    come before the chunks that use it."""
    query, chunks, floor = context.query, context.chunks, context.fusion.floor
    named, worded = query.named
    given = query.given
    lifted = dict(scores)
    defined: Scores = {}
    found = context.store.naming(named | worded | given, context.depth)
    # In a sentence, a name many files define says less about which one is meant
    # (`flatMap`); a look-up wants every definition of it.
    definers = {c.path for c in found if given.intersection(c.defines)}
    spread_by = 1 if query.names_only or query.one_word else max(1, len(definers))
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
    context.defined = defined
    return lifted


def _manifests(context: Context, scores: Scores) -> Scores:
    """The root manifests' chunks (they join ``chunks``) scored as if the keyword search had
    ranked them first: a packaging question's place (:mod:`.manifests`)."""
    lifted, floor = dict(scores), context.fusion.floor
    for path in MANIFESTS:
        for chunk in context.store.chunks_for_path(path):
            context.chunks.setdefault(chunk.id, chunk)
            lifted[chunk.id] = max(lifted.get(chunk.id, 0.0), floor) * WEIGHTS.manifest_lift
    return lifted


def _code_first(context: Context, scores: Scores) -> Scores:
    query, chunks = context.query, context.chunks
    return {
        key: value
        * role_weight(chunks[key], query.asked, context.exact(key) if query.names_only else None)
        for key, value in scores.items()
    }


def _legacy(context: Context, scores: Scores) -> Scores:
    old = context.legacy
    return {
        key: value * WEIGHTS.legacy
        if (folder := old.get(context.chunks[key].path)) and not context.query.asks_for(folder)
        else value
        for key, value in scores.items()
    }


def best_first(scores: Scores) -> list[str]:
    return sorted(scores, key=lambda key: (-scores[key], key))


def _neighbours(context: Context, scores: Scores) -> Scores:
    """The chunks beside the best candidates, scored by :func:`.neighbours.neighbour_scores`
    (one store read); those lent a score join ``chunks``."""
    chunks = context.chunks
    top = best_first(scores)[: WEIGHTS.neighbour_lenders]
    lenders = {key: (chunks[key], scores[key]) for key in top}
    spans = {(c.path, c.start_line, c.end_line) for c, _ in lenders.values()}
    found = context.store.adjacent(spans)
    lent = neighbour_scores(lenders, found)
    for chunk in found:
        if chunk.id in lent:
            chunks.setdefault(chunk.id, chunk)
    return {**scores, **lent}


def _meaning(context: Context, scores: Scores) -> Scores:
    weight = WEIGHTS.meaning_named if context.query.names else WEIGHTS.meaning
    asked, chunks = context.query.asked, context.chunks
    return reordered_by_meaning(
        scores, context.meaning, weight, lambda key: role_weight(chunks[key], asked)
    )


def _scaled(context: Context, scores: Scores) -> Scores:
    """Scaled, not clamped, into (0, 1]: unequal evidence stays unequal. Best first: the order
    search lists them in (a division may make near-equals equal; they keep their order)."""
    ordered = best_first(scores)
    top = max(1.0, scores[ordered[0]])
    return {key: scores[key] / top for key in ordered}


_BOTH: frozenset[PathName] = frozenset({"search", "question"})
_SEARCH: frozenset[PathName] = frozenset({"search"})

RULES: tuple[Rule, ...] = (
    Rule(
        "keyword",
        "the keyword search's rank, fused (RRF)",
        _BOTH,
        lambda c, _: c.fusion.keyword,
        share=True,
    ),
    Rule(
        "fields",
        "the candidates' BM25F rank over their fields, fused, for a query typing no identifier",
        _BOTH,
        lambda c, _: c.fusion.lexical,
        share=True,
    ),
    Rule(
        "vector",
        "the vectors' rank, fused",
        _BOTH,
        lambda c, _: c.fusion.fused,
        lambda c: c.fusion.vector,  # (without, the difference is rounding noise)
        share=True,
    ),
    Rule(
        "named",
        "a definition of a name the query gives starts where the keyword search's first would",
        _BOTH,
        _named,
    ),
    Rule(
        "defines",
        "a chunk defining a name the query gives as typed, x `defines_lift`",
        _BOTH,
        lambda c, s: {**s, **c.defined},
    ),
    Rule(
        "manifest",
        "a packaging query brings the root manifests in first",
        _BOTH,
        _manifests,
        lambda c: c.query.packaging,
    ),
    Rule(
        "identifiers",
        "the mean of the score and the share of the typed identifiers the chunk holds",
        _BOTH,
        lambda c, s: {key: search_score(value, c.exact(key)) for key, value in s.items()},
    ),
    Rule(
        "code_first",
        "docs, tests, examples and configuration not asked for, x `supporting`",
        _BOTH,
        _code_first,
    ),
    Rule(
        "centrality",
        "lifted by the file's place in the reference graph",
        _BOTH,
        lambda c, s: {
            key: value * central_weight(c.centrality.get(c.chunks[key].path))
            for key, value in s.items()
        },
    ),
    Rule(
        "file_name",
        "a code file named for the query lifted",
        _BOTH,
        lambda c, s: named_files(s, c.chunks, c.query.text, c.query.asked),
        # A look-up whose names are defined (or re-exported) here is answered by those chunks:
        # a file named for the name's words (`map_request.rs` for `FromRequest`) is not.
        lambda c: not (c.query.names_only and c.defined),
    ),
    Rule(
        "legacy",
        "an old or duplicate tree not asked for, x `legacy`",
        _BOTH,
        _legacy,
    ),
    Rule(
        "file",
        "gains `file_share` of the best other candidate of its file",
        _BOTH,
        lambda c, s: with_file_evidence(s, c.chunks),
    ),
    Rule(
        "neighbours",
        "the chunks beside the best candidates scored from theirs",
        _BOTH,
        _neighbours,
    ),
    Rule(
        "description",
        "a header+docstring chunk gives its score to the body, unless the query asks what",
        _BOTH,
        lambda c, s: bodies_first(s, c.chunks),
        lambda c: not c.query.asks_what,
    ),
    Rule(
        "meaning",
        "the semantic leg's nearest chunks reorder the ranking",
        _BOTH,
        _meaning,
        lambda c: bool(c.meaning),
    ),
    Rule(
        "file_repeat",
        "each further chunk of a file x `file_repeat`",
        _SEARCH,
        lambda c, s: spread_over_files(s, c.chunks),
    ),
    Rule("scale", "divided by the best score when it is over 1, into (0, 1]", _SEARCH, _scaled),
)


def rules_table() -> str:
    """The Markdown table of :data:`RULES`: each rule, what it does, and the paths reading it
    (docs/how-it-works.md, "Which rules each path reads")."""
    rows = [
        "| rule | what it does | " + " | ".join(PATHS) + " |",
        "| --- | --- | " + " | ".join("---" for _ in PATHS) + " |",
    ]
    for rule in RULES:
        read = " | ".join("yes" if path in rule.paths else "no" for path in PATHS)
        rows.append(f"| `{rule.name}` | {rule.does} | {read} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] != ["--markdown"]:
        sys.exit("usage: python -m codecite_lsp.retrieve.rules --markdown")
    sys.stdout.write(rules_table())
