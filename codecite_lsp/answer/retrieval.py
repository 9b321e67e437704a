"""Retrieval: keyword + vector candidates fused by reciprocal rank fusion, then, for questions,
a cheap rerank, a relevance floor and a token-budgeted selection of chunks for the prompt.

Scores:
- ``search``: ``Result.score`` is the fused RRF score divided by its best possible value, in
  (0, 1]; 1.0 means ranked first by every retriever that ran (keyword always, and vectors when
  present), so a chunk only the vectors found scores at most 1/3 however alone it is. When the query
  holds identifiers (``rotate_key``, ``rotateKey``, ``ident_42``), the score is the mean of that
  and the share of those identifiers the chunk holds verbatim (still in [0, 1]).
- ``retrieve``: ``Result.score`` is the calibrated relevance in [0, 1] (see ``relevance``); the
  floor (config.relevance_floor) is applied to it.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.records import Chunk, Result, content_hash
from ..core.terms import is_test_path, says, word_parts
from ..index.embedding import Embedder, EmbeddingError, StaticEmbedder, make_embedder

if TYPE_CHECKING:
    from ..core.config import Config
    from ..index.store import Store

log = logging.getLogger(__name__)

RRF_K = 60  # the usual constant of Cormack et al.: dampens the weight of the very first ranks
CHARS_PER_TOKEN = 4
# The vector ranking's weight in the fusion (keyword: 1.0). bench/eval_retrieval.py: 0.5 and
# 1.0 are within noise; 0.5 keeps a keyword hit ahead of a chunk that is merely similar.
VECTOR_WEIGHT = 0.5
# A chunk this dissimilar to the query (cosine) is noise, not a vector candidate: queries made of
# words the index never saw land around 0.15 (hashed vectors) against 0.3-0.7 for related code.
MIN_SIMILARITY = 0.2

# Keywords that introduce a named definition in the languages we chunk.
_DEFINING = "def|class|function|fn|func|interface|struct|enum|trait|type|const|let|var|module"
_IDENTIFIER_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True)
class RetrievalContext:
    """Where the question was asked: the current file and symbol boost their chunks."""

    path: str | None = None
    symbol: str | None = None
    extra_terms: tuple[str, ...] = ()


@dataclass
class Retrieval:
    selected: list[Result]  # what the prompt shows, merged, within the token budget
    candidates: list[Result]  # every reranked candidate, best first (for refusals)
    cleared_floor: bool
    warnings: list[str] = field(default_factory=list)


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


def _overlaps(a: Result | Chunk, b: Result | Chunk) -> bool:
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def dedup_overlapping(results: Iterable[Result]) -> list[Result]:
    """Keep the first (best) of results that share lines of one file."""
    kept: list[Result] = []
    for result in results:
        if not any(_overlaps(result, other) for other in kept):
            kept.append(result)
    return kept


def result_from_chunk(chunk: Chunk, score: float) -> Result:
    return Result(
        path=chunk.path,
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        symbol=chunk.symbol,
        score=score,
        content_hash=chunk.content_hash,
        text=chunk.text,
        language=chunk.language,
        kind=chunk.kind,
        start_byte=chunk.start_byte,
        end_byte=chunk.end_byte,
        revision=chunk.revision,
    )


def _lines(result: Result) -> list[str]:
    lines = result.text.split("\n")
    if len(lines) == result.end_line - result.start_line + 2 and lines[-1] == "":
        lines.pop()  # the chunk's text ends with its last line's newline
    return lines


def merge_adjacent(results: Sequence[Result]) -> list[Result]:
    """Merge overlapping or adjacent chunks of one file (same revision) into one source whose
    text is exactly the union of their lines; order follows each group's best member."""
    merged: list[Result] = []
    for result in results:
        for i, kept in enumerate(merged):
            touching = (
                kept.path == result.path
                and kept.revision == result.revision
                and result.start_line <= kept.end_line + 1
                and kept.start_line <= result.end_line + 1
            )
            if touching:
                merged[i] = _merge_two(kept, result)
                break
        else:
            merged.append(result)
    return merged


def _merge_two(a: Result, b: Result) -> Result:
    by_line = dict(enumerate(_lines(b), start=b.start_line))
    by_line.update(enumerate(_lines(a), start=a.start_line))
    start, end = min(a.start_line, b.start_line), max(a.end_line, b.end_line)
    text = "\n".join(by_line[n] for n in range(start, end + 1))
    if a.text.endswith("\n") and b.text.endswith("\n"):
        text += "\n"
    return replace(
        a,
        start_line=start,
        end_line=end,
        text=text,
        content_hash=content_hash(text),
        start_byte=min(a.start_byte, b.start_byte),
        end_byte=max(a.end_byte, b.end_byte),
        score=max(a.score, b.score),
    )


# ---------------------------------------------------------------------------------------------
# Reranking signals


def _identifiers(question: str) -> set[str]:
    """Identifier-looking words of a question (snake_case, camelCase, dotted, or with digits):
    the user named something in the code, so an exact occurrence is strong evidence."""
    found = set()
    for word in _IDENTIFIER_LIKE.findall(question):
        for name in word.split("."):
            shaped = "_" in name.strip("_") or any(c.isdigit() for c in name)
            camel = any(c.isupper() for c in name[1:]) and any(c.islower() for c in name)
            if shaped or camel:
                found.add(name)
    return found


def _whole_word(name: str, text: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) is not None


def _exact_share(names: set[str], text: str) -> float | None:
    """Share of the identifiers the user typed that occur whole in the text (None: none typed)."""
    if not names:
        return None
    return sum(_whole_word(name, text) for name in names) / len(names)


def _search_score(fused: float, exact: float | None) -> float:
    """An identifier the user typed outweighs rank fusion: a chunk merely similar to one that
    holds ``rotate_key`` verbatim must not come first because both retrievers half-liked it."""
    return fused if exact is None else (fused + exact) / 2


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class _Signals:
    relevance: float
    rerank: float


def relevance(coverage: float, fused: float) -> float:
    """Calibrated relevance in [0, 1]: the idf-weighted share of the question's content words
    the chunk holds, scaled by 0.75..1.0 with its fused rank. No shared content word -> 0, so a
    question about things the repository does not contain cannot clear the floor."""
    return coverage * (0.75 + 0.25 * fused)


class Retriever:
    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        config: Config,
        vector_weight: float = VECTOR_WEIGHT,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config
        self.vector_weight = vector_weight
        self.warnings: list[str] = []
        self._has_vectors: str | None = None  # embedder name known to have stored vectors

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
        return [(chunk, similarity) for chunk, similarity in found if similarity >= MIN_SIMILARITY]

    def search(self, query: str, limit: int = 10) -> list[Result]:
        """Best first; empty for an empty query; keyword-only when no vectors exist yet."""
        if not query.strip():
            return []
        if isinstance(self.embedder, StaticEmbedder):
            self.embedder.refresh()  # the indexer may have (re)trained it since we opened
        depth = max(limit * 2, 20)  # fusion needs more than `limit` from each side
        keyword = self.store.keyword_search(query, depth)
        vector = self._vector_ranking(query, depth)
        lists = [(keyword, 1.0), (vector, self.vector_weight)]
        rankings = [([c.id for c, _ in ranked], w) for ranked, w in lists if ranked]
        if not rankings:
            return []
        chunks = {c.id: c for ranked in (keyword, vector) for c, _ in ranked}
        fused = rrf([r for r, _ in rankings], weights=[w for _, w in rankings])
        # The keyword search always ran: when it found nothing, the vectors' first is no 1.0.
        best = (1.0 + (self.vector_weight if vector else 0.0)) / (RRF_K + 1)
        names = _identifiers(query)
        scores = {
            key: _search_score(value / best, _exact_share(names, chunks[key].text))
            for key, value in fused.items()
        }
        ordered = sorted(scores, key=lambda key: (-scores[key], key))
        results = (result_from_chunk(chunks[key], scores[key]) for key in ordered)
        return dedup_overlapping(results)[:limit]

    # -- questions ------------------------------------------------------------------------

    def _idf(self, word: str) -> float:
        if isinstance(self.embedder, StaticEmbedder):
            return self.embedder.idf(word)
        return 1.0  # no corpus statistics without the default model: every word counts alike

    def _signals(
        self,
        candidate: Result,
        terms: dict[str, float],
        identifiers: set[str],
        context: RetrievalContext | None,
    ) -> _Signals:
        symbol_words = set(word_parts(candidate.symbol or ""))
        path_words = set(word_parts(candidate.path))
        words = set(word_parts(candidate.text)) | symbol_words | path_words
        total = sum(terms.values())
        said = {t for t in terms if t in words or any(says(word, t) for word in words)}
        coverage = sum(terms[t] for t in said) / total if total else 0.0
        exact = _exact_share(identifiers, candidate.text) or 0.0
        score = relevance(coverage, candidate.score)
        rerank = score
        rerank += 0.15 * (len(symbol_words & terms.keys()) / len(terms) if terms else 0.0)
        rerank += 0.10 * (len(path_words & terms.keys()) / len(terms) if terms else 0.0)
        rerank += 0.15 * exact
        if "test" not in terms and is_test_path(candidate.path):
            rerank -= 0.10
        # Context reorders near-equals (the file being edited first); it is never evidence.
        if context and context.path == candidate.path:
            rerank += 0.20
        if context and context.symbol and _whole_word(context.symbol, candidate.text):
            rerank += 0.15
        return _Signals(relevance=score, rerank=rerank)

    def retrieve(self, question: str, context: RetrievalContext | None = None) -> Retrieval:
        """Candidates, reranked; the selection within config.context_chunks/context_tokens of
        those whose relevance clears config.relevance_floor, adjacent chunks merged."""
        extra = [*context.extra_terms, context.symbol or ""] if context else []
        query = " ".join([question, *extra]).strip()
        fused = self.search(query, self.config.candidates)
        terms = {word: self._idf(word) for word in word_parts(question)}
        identifiers = _identifiers(question)
        scored = [(r, self._signals(r, terms, identifiers, context)) for r in fused]
        scored.sort(key=lambda pair: -pair[1].rerank)
        candidates = [replace(r, score=round(s.relevance, 4)) for r, s in scored]

        selected: list[Result] = []
        budget = self.config.context_tokens
        for result in candidates:
            if result.score < self.config.relevance_floor:
                continue
            if len(selected) >= self.config.context_chunks:
                break
            cost = estimate_tokens(result.text)
            if cost > budget and selected:
                continue  # too big for what is left; a smaller one may still fit
            selected.append(result)
            budget -= cost
        return Retrieval(
            selected=merge_adjacent(selected),
            candidates=candidates,
            cleared_floor=bool(selected),
            warnings=list(self.warnings),
        )

    def retrieve_for_symbol(
        self, name: str, definition_path: str | None = None, limit: int = 6
    ) -> Retrieval:
        """Hover seeding: the chunk(s) defining ``name`` (in ``definition_path`` when given), then
        chunks using it as a whole word elsewhere, best first."""
        last = name.rsplit(".", 1)[-1]
        if not last.strip():
            return Retrieval(selected=[], candidates=[], cleared_floor=False)

        # Small files are one chunk without a symbol: recognise the definition by its keyword.
        keyword = re.compile(
            rf"^\s*(?:export\s+)?(?:pub\s+)?(?:async\s+)?(?:{_DEFINING})\s+{re.escape(last)}\b"
            rf"|^{re.escape(last)}\s*(?::[^=]*)?=",
            re.MULTILINE,
        )

        def defines(chunk: Chunk) -> bool:
            if chunk.symbol is not None and chunk.symbol.rsplit(".", 1)[-1] == last:
                return True
            return keyword.search(chunk.text) is not None

        local = self.store.chunks_for_path(definition_path) if definition_path else []
        found = [c for c, _ in self.store.keyword_search(last, self.config.candidates)]
        definitions = [c for c in [*local, *found] if defines(c)]
        uses = [c for c in found if not defines(c) and _whole_word(last, c.text)]
        uses.sort(key=lambda c: is_test_path(c.path))  # code before tests; stable
        ordered = [result_from_chunk(c, 1.0) for c in definitions] + [
            result_from_chunk(c, 0.5) for c in uses
        ]
        results = dedup_overlapping(ordered)[:limit]
        return Retrieval(
            selected=merge_adjacent(results), candidates=results, cleared_floor=bool(results)
        )


def open_retriever(repo: Path, config: Config) -> Retriever:
    """Open the repository's index (read-only use) and its embedder."""
    os.environ.setdefault("RUST_LOG", "error")
    from ..index.store import Store  # lazy: lancedb takes seconds to import

    index_dir = config.resolved_index_dir(repo)
    return Retriever(Store.open(index_dir), make_embedder(config, index_dir), config)
