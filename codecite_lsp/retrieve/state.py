"""What a Retriever remembers between requests for its ranking: the centrality prior's
percentiles, the old and duplicate trees found from them, compound names split against the
corpus's vocabulary, the words' idf, and which embedder is known to have stored vectors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .legacy import legacy_files
from .names import Compounds
from .prior import CentralityPrior

if TYPE_CHECKING:
    from ..index.layered import LayeredStore
    from ..index.static_embedding import StaticEmbedder
    from ..index.store import Store


class RetrieverState:
    def __init__(
        self, store: Store | LayeredStore, prior: CentralityPrior, words: StaticEmbedder | None
    ) -> None:
        self.store = store
        self.prior = prior
        # The corpus's word statistics: the static embedder's when it makes the vectors.
        self.words = words
        self.has_vectors: str | None = None  # embedder name known to have stored vectors
        self._compounds: tuple[object, Compounds] | None = None  # (its vocabulary's model, ...)
        self._legacy: tuple[dict[str, float], dict[str, str]] | None = None  # (centrality, ...)

    def centrality(self) -> dict[str, float]:
        """Each file's percentile in the reference graph (:mod:`.prior`)."""
        return self.prior.at(self.store.chunks_version())

    def legacy_files(self, centrality: dict[str, float]) -> dict[str, str]:
        """The files of old and duplicate trees (:mod:`.legacy`), found once per prior (whose
        files are the repository's code)."""
        if self._legacy is None or self._legacy[0] is not centrality:
            self._legacy = (centrality, legacy_files(centrality.keys()))
        return self._legacy[1]

    def split(self) -> Compounds:
        """Compound names split against the word statistics' vocabulary (the corpus's own
        words); without that model, names are not split."""
        model = self.words.model if self.words is not None else None
        if self._compounds is None or self._compounds[0] is not model:
            vocabulary = model.vocab if model is not None else {}
            self._compounds = (model, Compounds(vocabulary.__contains__))
        return self._compounds[1]

    def idf(self, word: str) -> float:
        if self.words is not None:
            return self.words.idf(word)
        return 1.0  # no corpus statistics (`embedding = "none"`): every word counts alike
