"""The retrieval facade: :class:`Retriever` holds an index's store, its embedders and what it
remembers between requests (:mod:`.state`), and runs each read path on one pinned version of the
index. The paths live in their own modules:

- ``search`` / ``results``: :mod:`.search`, keyword + vector candidates fused by reciprocal rank
  fusion, then the ranking rules, each a named :class:`.rules.Rule` of :data:`.rules.RULES`
  reading the query parsed once (:class:`.query.Query`). ``Result.score`` starts as the fused RRF
  score divided by its best possible value (1.0: ranked first by every ranking that ran) and is
  divided by the best score when that is over 1 (``scale``): never clamped, so unequal evidence
  stays unequal. Each rule's share is kept in ``Result.terms``; every weight is in
  :mod:`.weights`.
- ``retrieve``: :mod:`.question`, the same search pass (:class:`.search.Ranking`): its pool at
  the scores before ``file_repeat`` and ``scale``, its ``search`` term and search's first three
  (which keep their places in the prompt, :func:`.selection.select_sources`) read from the list
  as shown; the code those lead to (:mod:`.candidates`), a cheap rerank, the relevance floor
  (config.relevance_floor, on the calibrated relevance ``Result.score`` holds) and the prompt's
  sources. Its terms add up to the rerank score that ordered the candidates
  (:func:`.candidates.rerank_signals`, ``callee``, ``semantic``).
- ``retrieve_for_symbol``, ``retrieve_lines``, ``callers``: :mod:`.symbol`, by name and lines.

Which rules each path reads: docs/how-it-works.md, Retrieval (:func:`.rules.rules_table`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from ..core.environment import apply_defaults
from ..core.records import Result
from ..index.embedder import Embedder
from ..index.embedding import make_embedder, make_word_model, minilm_cache
from ..index.minilm import CHUNK_TOKENS
from ..index.static_embedding import StaticEmbedder

if TYPE_CHECKING:
    from ..core.config import Config
    from ..index.layered import LayeredStore
    from ..index.store import Store

from . import symbol
from .candidates import RetrievalContext
from .meaning import MeaningLeg
from .on_disk import OnDisk, on_disk
from .prior import CentralityPrior
from .query import Query
from .question import Retrieval, retrieve
from .search import ranking
from .semantic import SemanticRanker, make_ranker
from .state import RetrieverState
from .weights import WEIGHTS

__all__ = ["Retrieval", "Retriever", "open_retriever"]

_P = ParamSpec("_P")
_T = TypeVar("_T")


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
        self.prior = CentralityPrior(store.references)
        self.state = RetrieverState(store, self.prior, self.words)

    @_one_version
    def search(self, query: str, limit: int = 10) -> list[Result]:
        """Best first; empty for an empty query; keyword-only when no vectors exist yet."""
        return ranking(self, Query(query), limit).shown

    def results(self, query: str, limit: int = 10) -> list[Result]:
        """What a user is shown for ``query``: :meth:`search`, less any result whose file no
        longer holds its lines."""
        return self.checked(self.search(query, limit)).kept

    def checked(self, results: list[Result]) -> OnDisk:
        """``results`` against the working tree (:mod:`.on_disk`); all kept without one."""
        if self.repo is None:
            return OnDisk(results, [])
        return on_disk(self.repo, self.config, results)

    @_one_version
    def retrieve(self, question: str, context: RetrievalContext | None = None) -> Retrieval:
        """The question path (:func:`.question.retrieve`)."""
        return retrieve(self, question, context)

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
        """Hover seeding (:func:`.symbol.retrieve_for_symbol`)."""
        return symbol.retrieve_for_symbol(self, name, definition_path, limit, uses, line)

    def retrieve_lines(self, path: str, first: int, last: int) -> Retrieval:
        """The chunks of ``path`` holding its lines ``first``..``last`` (:mod:`.symbol`)."""
        return symbol.retrieve_lines(self, path, first, last)

    @_one_version
    def callers(self, names: list[str], limit: int = 6) -> Retrieval:
        """The lines calling ``names`` (:func:`.symbol.callers`)."""
        return symbol.callers(self, names, limit)


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
