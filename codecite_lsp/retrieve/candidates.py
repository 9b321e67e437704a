"""The question path's candidates beyond the search's (:meth:`.retriever.Retriever.retrieve`):
the code the best results lead to (the definitions they call, the callers of the names the
question gives), the chunks of their files whose definitions the question names, the signature
lines above a chunk cut from a long definition, and each candidate's rerank signals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.records import Chunk, Result
from ..core.terms import role, terms_said, whole_word, word_parts
from ..ingest.readback import read_isolated
from ..ingest.syntax import headers

if TYPE_CHECKING:
    from ..index.layered import LayeredStore
    from ..index.store import Store

from .names import NameMatch, exact_share, named_in, words_of
from .scoring import Signals, relevance, role_weight
from .selection import line_range
from .weights import WEIGHTS

# A chunk naming its symbol in this many first lines starts that definition (with decorators
# and leading comments): it needs no signature from above.
HEAD_LINES = 8


@dataclass(frozen=True)
class RetrievalContext:
    """Where the question was asked: the current file and symbol boost their chunks."""

    path: str | None = None
    symbol: str | None = None
    extra_terms: tuple[str, ...] = ()


def rerank_signals(
    candidate: Result,
    placed: float,
    terms: dict[str, float],
    typed: set[str],
    context: RetrievalContext | None,
    asked: frozenset[str],
    naming: NameMatch,
) -> Signals:
    """A candidate's calibrated relevance (what the floor reads) and its rerank score, the sum
    of its named terms (each the weight of :mod:`.weights` of that name times its evidence).
    ``placed``: its score in the search's list as shown (``codecite search``), in (0, 1]."""
    chunk = candidate.chunk
    symbol_words = set(word_parts(chunk.symbol or ""))
    path_words = set(word_parts(chunk.path))
    words = words_of(chunk.text) | symbol_words | path_words
    said = terms_said(terms, words)
    exact = exact_share(typed, chunk.text) or 0.0
    # An identifier the question names weighs as much as its two rarest words together:
    # `after_this_request` is better evidence than "register" or "callback".
    named = WEIGHTS.identifier_idf * max(terms.values(), default=1.0) * len(typed)
    total = sum(terms.values()) + named
    coverage = (sum(terms[t] for t in said) + named * exact) / total if total else 0.0
    # The search score as the calibration reads it: up to 1 (a look-up's lifts order the
    # search; the question's own terms below order the rerank).
    searched = min(1.0, candidate.score)
    score = relevance(coverage, searched)
    # code first: docs, tests, changelogs follow the code they describe
    supporting = role_weight(chunk, asked) < 1.0
    # Context reorders near-equals (the file being edited first); it is never evidence.
    in_file = bool(context and context.path == chunk.path)
    symbol = context.symbol if context else None
    has_symbol = bool(symbol and whole_word(symbol, chunk.text))
    parts = (
        ("relevance", score),
        ("search", WEIGHTS.search * placed),
        ("symbol_words", WEIGHTS.symbol_words * _share(symbol_words, terms)),
        ("path_words", WEIGHTS.path_words * _share(path_words, terms)),
        ("exact", WEIGHTS.exact * exact),
        ("name", WEIGHTS.name * naming(chunk.defines)),
        ("not_code", -WEIGHTS.not_code if supporting else 0.0),
        ("context_path", WEIGHTS.context_path if in_file else 0.0),
        ("context_symbol", WEIGHTS.context_symbol if has_symbol else 0.0),
    )
    rerank = 0.0
    for _, value in parts:
        rerank += value
    return Signals(relevance=score, rerank=rerank, terms=tuple((n, v) for n, v in parts if v))


def _share(words: set[str], terms: dict[str, float]) -> float:
    return len(words & terms.keys()) / len(terms) if terms else 0.0


class QuestionFiles:
    """The chunks of the files one question reads, each file read from the store once."""

    def __init__(self, store: Store | LayeredStore) -> None:
        self.store = store
        self._files: dict[str, list[Chunk]] = {}

    def chunks_of(self, path: str) -> list[Chunk]:
        if path not in self._files:
            self._files[path] = self.store.chunks_for_path(path)
        return self._files[path]

    def followed(self, question: str, found: list[Result]) -> tuple[list[Result], list[Result]]:
        """Follow the code from the question and the best results: (the definitions the two
        best chunks call whose names share a word with the question, the callers of the names
        the question gives), scored like the weakest search result."""
        named, _ = named_in(question)
        floor = min((r.score for r in found), default=0.0)
        words = set(word_parts(question))
        callees = {
            name
            for best in found[:2]
            for chunk in self.chunks_of(best.chunk.path)
            if chunk.start_line <= best.chunk.end_line and best.chunk.start_line <= chunk.end_line
            for name in chunk.uses
            if not words.isdisjoint(words_of(name))
        }
        callers = self.store.naming(named, WEIGHTS.follow_limit, column="uses")
        definitions = self.store.naming(callees - named, WEIGHTS.follow_limit)
        return (
            [Result(c, floor) for c in definitions],
            [Result(c, floor) for c in callers],
        )

    def named_siblings(self, found: list[Result], named: NameMatch) -> list[Result]:
        """The chunks of the best results' files whose own definitions the question names
        (:class:`.names.NameMatch`), scored like the weakest search result: the search ranks
        a file's chunks by the words of their bodies, and a definition whose body holds few of
        the question's words may be missing from the candidates while its file leads them.
        The ``sibling_limit`` best named, so that a question naming a common word stays cheap."""
        floor = min((r.score for r in found), default=0.0)
        paths = list(dict.fromkeys(r.chunk.path for r in found))[: WEIGHTS.sibling_files]
        present = {(r.chunk.path, r.chunk.start_line) for r in found}
        matches = [
            (score, chunk)
            for path in paths
            for chunk in self.chunks_of(path)
            if (chunk.path, chunk.start_line) not in present
            for score in [named(chunk.defines)]
            if score >= WEIGHTS.sibling_match
        ]
        matches.sort(key=lambda pair: -pair[0])  # stable: equals stay in file order
        return [Result(chunk, floor) for _, chunk in matches[: WEIGHTS.sibling_limit]]

    def headers(self, result: Result) -> list[Result]:
        """Signature lines of the definitions enclosing ``result`` that start above it (a chunk
        cut from a long method: the method's and its class's signatures)."""
        cut = result.chunk
        if not cut.symbol or role(cut.path, cut.language) not in ("code", "test"):
            return []
        head = "".join(cut.text.splitlines(keepends=True)[:HEAD_LINES])
        if whole_word(cut.symbol.rsplit(".", 1)[-1], head):
            return []  # its own definition starts here: nothing above to show (no store read)
        owners: dict[str, Chunk] = {}  # the nearest definition of each name above
        for name in cut.symbol.split("."):
            for chunk in self.chunks_of(cut.path):
                if name in chunk.defines and chunk.start_line < cut.start_line:
                    owners[name] = chunk
        # Parsed in the parse worker, all in one round trip (ingest/readback.py).
        parsed = read_isolated(headers, [(c.path, c.text) for c in owners.values()])
        found: list[Result] = []
        for (name, owner), heads in zip(owners.items(), parsed, strict=True):
            header = next((h for h in heads if h.name == name), None)
            if header is None:
                continue
            start = owner.start_line + header.start_line - 1
            end = owner.start_line + header.end_line - 1
            if end < cut.start_line:
                found.append(line_range(Result(owner, result.score), start, end))
        return found
