"""Chunk embeddings: which embedder a configuration names (the offline default in
static_embedding.py, MiniLM, or a litellm embedding model), the litellm embedder, and the batched
filling of the store's vectors behind the keyword index."""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.environment import apply_defaults
from ..core.terms import role
from .embedder import Embedder, EmbeddingError, Progress, unit_rows
from .minilm import CHUNK_TOKENS, RERANK_TOKENS, MiniLMEmbedder, VectorCache
from .static_embedding import StaticEmbedder, static_model_path, train_if_needed

if TYPE_CHECKING:
    from ..core.config import Config
    from .store import Store


# ---------------------------------------------------------------------------------------------
# A litellm embedding model (OpenAI, Ollama, ...): optional, needs its provider reachable


class LiteLLMEmbedder:
    """``mock_response`` is a testing aid passed to litellm's own mock mechanism (litellm then
    returns that one vector per call, so tests use ``batch=1``)."""

    def __init__(
        self,
        model: str,
        *,
        timeout: float = 60.0,
        batch: int = 64,
        mock_response: list[float] | None = None,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.batch = batch
        self.mock_response = mock_response
        self.name = f"litellm-{model}"
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def _call(self, batch: list[str]) -> list[list[float]]:
        apply_defaults()  # before the import: no price-table download
        import litellm  # lazy: ~5 s import

        litellm.suppress_debug_info = True  # our error message says what failed
        extra: dict[str, Any] = {}
        if self.mock_response is not None:
            extra["mock_response"] = self.mock_response
        try:
            response: Any = litellm.embedding(
                model=self.model, input=batch, timeout=self.timeout, **extra
            )
        except Exception as exc:  # litellm raises provider-specific types; all mean "no vectors"
            raise EmbeddingError(
                f"embedding model {self.model!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        data = [item["embedding"] for item in response.data]
        if len(data) != len(batch):
            raise EmbeddingError(
                f"embedding model {self.model!r} returned {len(data)} vectors"
                f" for {len(batch)} texts"
            )
        return data

    def embed(self, texts: list[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch):
            rows.extend(self._call(texts[start : start + self.batch]))
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        if self._dim is None and len(texts):
            self._dim = int(matrix.shape[1])
        return unit_rows(matrix)


def make_embedder(config: Config, index_dir: Path) -> Embedder | None:
    """None for ``embedding = "none"``; the static default (maybe untrained); MiniLM (offline,
    ~40 chunks/s: vectors fill behind the keyword index); else litellm."""
    choice = config.embedding.strip()
    if choice == "none":
        return None
    if choice == "minilm":
        return minilm_cache(index_dir, CHUNK_TOKENS)
    if choice == "default":
        path = static_model_path(index_dir)
        embedder = StaticEmbedder(path)
        if embedder.model is None and path.exists():
            path.unlink()  # unreadable (refresh logged why): the next fill_vectors retrains it
        return embedder
    return LiteLLMEmbedder(choice, timeout=config.model_timeout)


def make_word_model(
    config: Config, index_dir: Path, embedder: Embedder | None
) -> StaticEmbedder | None:
    """The corpus's word statistics (each word's IDF, the vocabulary compound names split
    against): the static model trained on the repository, whichever embedder makes the
    vectors; None with ``embedding = "none"`` (every word then counts alike)."""
    if isinstance(embedder, StaticEmbedder):
        return embedder
    if config.embedding.strip() == "none":
        return None
    return StaticEmbedder(static_model_path(index_dir))


def train_words(
    store: Store, embedder: Embedder, index_dir: Path, progress: Progress | None
) -> None:
    """Train the word statistics once when another embedder makes the vectors (the static
    embedder trains itself in :func:`fill_vectors`); seconds, before the vectors' minutes."""
    path = static_model_path(index_dir)
    if isinstance(embedder, StaticEmbedder) or path.is_file():
        return
    train_if_needed(store, StaticEmbedder(path), progress)


def minilm_cache(index_dir: Path, max_tokens: int = RERANK_TOKENS) -> VectorCache:
    """MiniLM reading ``max_tokens`` tokens, its vectors cached under the index folder by
    content hash: the chunks' vectors (``embedding = "minilm"``) at 64, the question rerank's
    windows (``rerank``) at 128, one file each."""
    return VectorCache(index_dir / "embedding", MiniLMEmbedder(max_tokens))


# ---------------------------------------------------------------------------------------------
# Filling the store's vectors behind the keyword index

READ_BATCH = 4096  # chunks lacking a vector read, and their vectors written, at once


def _lacking(
    store: Store, name: str, size: int, among: Collection[str] | None
) -> Iterator[list[tuple[str, str]]]:
    """The chunks lacking a vector, ``size`` at a time. The whole index in one scan of the
    chunks table (reading each batch's texts by their hashes instead took a third of the
    stdlib's fill: bench/bench_index.py); an update's hashes ``among`` by a filter."""
    if among is None:
        yield from store.lacking_vectors(name, size)
        return
    previous: list[str] = []
    while True:
        pending = store.missing_vectors(name, size, among)
        hashes = [h for h, _ in pending]
        if not pending or hashes == previous:  # nothing left, or the store did not take them
            return
        yield pending
        if len(pending) < size:
            return  # that was the rest: a saved file must not pay for another scan
        previous = hashes


def fill_vectors(
    store: Store,
    embedder: Embedder,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    batch: int = 512,
    among: Collection[str] | None = None,
    train: bool = True,
) -> int:
    """Embed every chunk lacking a vector for ``embedder``, ``batch`` chunks at a time; only
    the chunks of the content hashes ``among`` when given (those an update wrote, when every
    other chunk already has its vector: the update then reads only their rows).

    Trains the default embedder first when needed. Returns the number of vectors written;
    stops early (keeping what was written) when ``cancel`` is set. Raises EmbeddingError when
    the model fails; the keyword index is untouched either way.
    """
    if isinstance(embedder, StaticEmbedder):
        if train:  # not over a base: the overlay's vectors must stay comparable with its own
            train_if_needed(store, embedder, progress, among)
        if embedder.model is None:
            return 0
    name = embedder.name
    total = store.chunk_count()
    done = store.vector_count(name) if progress else 0
    written = 0
    for pending in _lacking(store, name, max(batch, READ_BATCH), among):
        if cancel and cancel.is_set():
            break
        hashes = [h for h, _ in pending]
        embedded: list[np.ndarray] = []
        try:
            for start in range(0, len(pending), batch):
                if embedded and cancel and cancel.is_set():
                    break
                part = pending[start : start + batch]
                texts = [text for _, text in part]
                # MiniLM: through its cache, so vectors the rerank embedded are not computed again
                embedded.append(
                    embedder.vectors([h for h, _ in part], texts)
                    if isinstance(embedder, VectorCache)
                    else embedder.embed(texts)
                )
                done += len(part)
                if progress:
                    progress(min(done, total), total, "embedding chunks")
        finally:  # cancelled, or the model failed: what is embedded is kept
            if embedded:
                vectors = np.vstack(embedded)
                store.put_vectors(name, hashes[: len(vectors)], vectors)
                written += len(vectors)
    return written


# ---------------------------------------------------------------------------------------------
# The semantic leg's vectors (MiniLM, in its content-hash cache), behind the keyword index

MEANING_BATCH = 64  # chunks embedded between two looks at ``cancel`` (~1-2 s here)


def meaning_order(store: Store, cache: VectorCache) -> list[str]:
    """The content hashes the cache lacks, code first: a question is answered by the code that
    does the work, so its vectors are the ones worth having while the rest are written."""
    hashes, paths, languages = store.tables.hash_paths()
    lacking = set(cache.lacking(list(dict.fromkeys(hashes))))
    first: dict[str, None] = {}
    later: dict[str, None] = {}
    for content_hash, path, language in zip(hashes, paths, languages, strict=True):
        if content_hash in lacking:
            (first if role(path, language) == "code" else later)[content_hash] = None
    return [*first, *(h for h in later if h not in first)]


def fill_meaning(
    store: Store,
    cache: VectorCache,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    among: Collection[str] | None = None,
) -> int:
    """Embed every chunk the cache lacks (of the content hashes ``among`` only, when given: a
    saved file's), code first; returns how many. Stops early, keeping what was embedded, when
    ``cancel`` is set; raises MiniLMUnavailable when the model cannot run."""
    pending = cache.lacking(sorted(among)) if among is not None else meaning_order(store, cache)
    total = len(pending)
    done = 0
    for start in range(0, total, MEANING_BATCH):
        if cancel is not None and cancel.is_set():
            break
        batch = pending[start : start + MEANING_BATCH]
        texts = among if isinstance(among, Mapping) else store.tables.texts(batch)
        present = [h for h in batch if h in texts]
        cache.vectors(present, [texts[h] for h in present])
        done += len(batch)
        if progress:
            progress(done, total, "embedding chunks for semantic search")
    return done
