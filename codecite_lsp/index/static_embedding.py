"""The offline default embedding: a static embedding trained on the repository itself (PPMI + SVD
over identifier parts, trained on the indexed chunks), and when it (re)trains.

Why a repository-trained static embedding: nothing may be downloaded at run time, and the small
ONNX models that ship in PyPI packages either lack their tokenizer or embed ~60 snippets/s on two
cores (50k chunks: 30+ minutes). A PPMI co-occurrence matrix of identifier sub-tokens, reduced by a
truncated SVD, trains in seconds with numpy and learns the repository's own vocabulary
("rotate" ~ "retire" ~ "grace"). bench/eval_retrieval.py measures it against keyword-only search
(600 stdlib docstring queries, docstrings removed from the index; question path = hybrid +
rerank): file-level MRR 0.573 vs 0.560 keyword-only, R@5 0.738 vs 0.725; chunk-level MRR 0.291 vs
0.290. Paired per query: 90 better / 73 worse (file), 85 / 97 (chunk): a small, not significant
gain, for ~4x the keyword indexing time. Kept as the default because it never hurt the question
path measurably and costs no download; ``embedding = "none"`` is the cheaper equal.

When it (re)trains: on a cold index (no model file yet) of at least ``MIN_TRAIN_CHUNKS`` chunks
(smaller repositories stay keyword-only), and when the vocabulary has drifted —
more than ``DRIFT_RETRAIN`` of the word occurrences in chunks still lacking a vector are unknown to
the model, and those chunks are at least ``DRIFT_MIN_SHARE`` of the index. The embedder's name
carries a digest of the trained model, so vectors of an older model are never mixed with new ones.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import os
import threading
import zipfile
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..core.terms import word_parts
from .embedder import EmbeddingError, Progress, unit_rows

if TYPE_CHECKING:
    from .store import Store

log = logging.getLogger(__name__)

STATIC_VERSION = "static-v2"  # v2: trained on the words of core/terms.py as of index layout 4
DRIFT_RETRAIN = 0.25
DRIFT_MIN_SHARE = 0.10
TRAIN_MAX_CHUNKS = 40_000  # a sample this big already fixes the vocabulary of a large repository
# Below this many chunks co-occurrence statistics are noise: such a repository stays keyword-only
# (a judgement, not a measurement: on the 8-chunk sample repository the vectors ranked at random).
MIN_TRAIN_CHUNKS = 100
_EMBED_BLOCK = 4096  # known words embedded at once: their vectors stay in the cache
_PAIRS_HELD = 4_000_000  # co-occurrence pairs counted at once in training (32 MB of keys)


@dataclass(frozen=True)
class StaticModel:
    vocab: dict[str, int]
    vectors: np.ndarray  # (V, dim) float32, unit rows
    idf: np.ndarray  # (V,) float32
    documents: int  # chunks the model was trained on
    digest: str

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        words = sorted(self.vocab, key=self.vocab.__getitem__)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(
            tmp,
            vectors=self.vectors,
            idf=self.idf,
            words=np.array(words, dtype=object).astype(str),
            meta=np.array(json.dumps({"documents": self.documents, "digest": self.digest})),
        )
        os.replace(tmp, path)  # readers never see a half-written model

    @classmethod
    def load(cls, path: Path) -> StaticModel:
        with np.load(path, allow_pickle=False) as data:
            words = [str(w) for w in data["words"]]
            meta = json.loads(str(data["meta"]))
            return cls(
                vocab={w: i for i, w in enumerate(words)},
                vectors=data["vectors"].astype(np.float32),
                idf=data["idf"].astype(np.float32),
                documents=int(meta["documents"]),
                digest=str(meta["digest"]),
            )


@dataclass(frozen=True)
class TrainingParams:
    dim: int = 256  # 256/8 vs 128/4 in bench/eval_retrieval.py: vectors-only MRR 0.473 vs 0.445
    max_vocab: int = 20_000
    contexts: int = 1_000  # context words: the most frequent ones
    window: int = 8
    min_df: int = 2
    smoothing: float = 0.75  # context-distribution smoothing of PMI (Levy et al. 2015)


def train_static(texts: Sequence[str], params: TrainingParams | None = None) -> StaticModel:
    """Train on chunk texts. Deterministic: the same texts give the same model and digest."""
    params = params or TrainingParams()
    docs = [word_parts(t) for t in texts]
    df = Counter(w for doc in docs for w in set(doc))
    ranked = sorted((w for w, n in df.items() if n >= params.min_df), key=lambda w: (-df[w], w))
    words = ranked[: params.max_vocab]
    if len(words) < 2:
        raise EmbeddingError("too little text to train the default embedding")
    vocab = {w: i for i, w in enumerate(words)}
    contexts = min(params.contexts, len(words))

    # Token ids with a gap of -1 between documents, so windows never span two chunks.
    gap = [-1] * params.window
    stream = np.fromiter(
        (i for doc in docs for i in [*(vocab[w] for w in doc if w in vocab), *gap]), dtype=np.int32
    )
    # Co-occurrence counts, the pairs of a few window offsets and directions at a time: all
    # at once would hold ~16 copies of the token stream (a gigabyte for the stdlib), and a
    # count of the whole matrix per offset was most of a small repository's training.
    cells = len(words) * contexts
    counts = np.zeros(cells, dtype=np.int32)
    pending: list[np.ndarray] = []
    held = 0
    for offset in range(1, params.window + 1):
        left, right = stream[:-offset], stream[offset:]
        for word, ctx in ((left, right), (right, left)):
            keep = (word >= 0) & (ctx >= 0) & (ctx < contexts)
            pending.append(word[keep].astype(np.int64) * contexts + ctx[keep])
            held += len(pending[-1])
            if held >= min(cells, _PAIRS_HELD):
                counts += np.bincount(np.concatenate(pending), minlength=cells)
                pending, held = [], 0
    if pending:
        counts += np.bincount(np.concatenate(pending), minlength=cells)
    matrix = counts.reshape(len(words), contexts).astype(np.float32)
    del counts, pending

    total = matrix.sum()
    word_p = matrix.sum(axis=1, keepdims=True) / max(total, 1.0)
    ctx_mass = matrix.sum(axis=0, keepdims=True) ** params.smoothing
    ctx_p = ctx_mass / max(float(ctx_mass.sum()), 1e-12)
    # PPMI in place: the matrix is the largest array of the training
    ppmi = matrix
    ppmi /= max(total, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ppmi /= word_p * ctx_p
        np.log(ppmi, out=ppmi)
    ppmi[~(ppmi > 0)] = 0.0  # log 0 = -inf, 0/0 = nan: no association

    # Truncated SVD through the small (contexts x contexts) Gram matrix: cheap and exact.
    dim = min(params.dim, contexts - 1)
    eigenvalues, eigenvectors = np.linalg.eigh(ppmi.T.astype(np.float64) @ ppmi)
    top = np.argsort(eigenvalues)[::-1][:dim]
    singular = np.sqrt(np.maximum(eigenvalues[top], 1e-12))
    left_vectors = (ppmi @ eigenvectors[:, top]) / singular
    signs = np.sign(left_vectors.sum(axis=0))  # fix each axis's sign: deterministic output
    signs[signs == 0] = 1
    vectors = unit_rows(left_vectors * signs * np.sqrt(singular))

    n = len(docs)
    idf = np.log((n + 1) / (np.array([df[w] for w in words], dtype=np.float64) + 1)) + 1
    digest = hashlib.sha256(vectors.tobytes() + "\0".join(words).encode()).hexdigest()[:12]
    return StaticModel(vocab, vectors, idf.astype(np.float32), n, digest)


@functools.lru_cache(maxsize=65_536)
def _hashed_vector(word: str, dim: int) -> np.ndarray:
    """A fixed pseudo-random unit vector for a word the model does not know: a new identifier
    still matches itself between a question and a chunk."""
    seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
    vector = np.random.default_rng(seed).standard_normal(dim)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


class StaticEmbedder:
    """The offline default. Untrained until ``fit`` (fill_vectors trains it on a cold index)."""

    def __init__(self, model_path: Path) -> None:
        self.model_path = model_path
        self.model: StaticModel | None = None
        self._stamp: int | None = None  # mtime_ns of the model file we loaded
        self._lock = threading.Lock()
        self.refresh()

    def refresh(self) -> None:
        """Load the model file if another process (or Indexer) wrote a new one since."""
        try:
            stamp = self.model_path.stat().st_mtime_ns
        except FileNotFoundError:
            return
        if stamp == self._stamp:
            return
        try:
            model = StaticModel.load(self.model_path)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:  # damaged
            log.warning("default embedding model unreadable: %s", exc)
            return
        with self._lock:
            self.model, self._stamp = model, stamp

    @property
    def name(self) -> str:
        return f"{STATIC_VERSION}-{self.model.digest if self.model else 'untrained'}"

    @property
    def dim(self) -> int:
        return self.model.dim if self.model else TrainingParams().dim

    def fit(self, texts: Sequence[str], params: TrainingParams | None = None) -> None:
        model = train_static(texts, params)
        model.save(self.model_path)
        with self._lock:
            self.model, self._stamp = model, self.model_path.stat().st_mtime_ns

    def unknown_share(self, texts: Iterable[str]) -> float:
        """Fraction of word occurrences the model does not know (1.0 when untrained)."""
        if self.model is None:
            return 1.0
        words = [w for t in texts for w in word_parts(t)]
        if not words:
            return 0.0
        return sum(w not in self.model.vocab for w in words) / len(words)

    def idf(self, word: str) -> float:
        """Inverse document frequency of a stemmed word; unknown words count as rare."""
        if self.model is None:
            return 1.0
        index = self.model.vocab.get(word)
        if index is None:
            return float(np.log(self.model.documents + 1) + 1)
        return float(self.model.idf[index])

    def embed(self, texts: list[str]) -> np.ndarray:
        model = self.model
        if model is None:
            raise EmbeddingError("the default embedding is not trained yet (run `codecite index`)")
        rare = float(np.log(model.documents + 1) + 1)
        rows: list[int] = []
        ids: list[int] = []
        tfs: list[float] = []
        unknown: list[tuple[int, str, float]] = []
        for row, text in enumerate(texts):
            for word, count in Counter(word_parts(text)).items():
                index = model.vocab.get(word)
                if index is None:
                    unknown.append((row, word, (1 + math.log(count)) * rare))
                else:
                    rows.append(row)
                    ids.append(index)
                    tfs.append(1 + math.log(count))
        out = np.zeros((len(texts), model.dim), dtype=np.float32)
        known = np.asarray(ids, dtype=np.int64)
        weights = np.asarray(tfs, dtype=np.float32) * model.idf[known]
        row_of = np.asarray(rows, dtype=np.int64)
        # The known words' weighted vectors summed per row (rows come in order), a block of
        # words at a time: one (words x dim) product for all was 100 MB on 2,500 chunks, and
        # its memory traffic most of the time (bench/bench_first_search.py).
        for start in range(0, len(known), _EMBED_BLOCK):
            part = slice(start, start + _EMBED_BLOCK)
            block_rows = row_of[part]
            firsts = np.flatnonzero(np.r_[True, block_rows[1:] != block_rows[:-1]])
            summed = np.add.reduceat(weights[part, None] * model.vectors[known[part]], firsts)
            out[block_rows[firsts]] += summed  # each row once per block: no repeated index
        for row, word, weight in unknown:
            out[row] += weight * _hashed_vector(word, model.dim)
        out[~out.any(axis=1), 0] = 1.0  # no words at all: a fixed unit vector keeps rows unit
        return unit_rows(out)


def static_model_path(index_dir: Path) -> Path:
    return index_dir / "embedding" / f"{STATIC_VERSION}.npz"


def train_if_needed(
    store: Store,
    embedder: StaticEmbedder,
    progress: Progress | None,
    among: Collection[str] | None = None,
) -> None:
    """Train on a cold index; retrain on vocabulary drift. ``among``: the only content hashes
    that may lack a vector (an update's, every other chunk having one), read by a filter."""
    chunks = store.chunk_count()
    if chunks < MIN_TRAIN_CHUNKS:
        return
    if embedder.model is not None:
        if among is not None and len(among) < DRIFT_MIN_SHARE * chunks:
            return  # the few chunks an update wrote cannot be a drift
        if among is None and chunks - store.vector_count(embedder.name) < DRIFT_MIN_SHARE * chunks:
            return  # cheap count first: a corpus scan only when many vectors are missing
        pending = store.missing_vectors(embedder.name, TRAIN_MAX_CHUNKS, among)
        share = len(pending) / chunks
        if (
            share < DRIFT_MIN_SHARE
            or embedder.unknown_share(t for _, t in pending) <= DRIFT_RETRAIN
        ):
            return
        log.info("vocabulary drift: retraining the default embedding")
    if progress:
        progress(0, chunks, "training the default embedding")
    # An untrained (or superseded) name has no vectors: missing_vectors yields the corpus itself.
    corpus = store.missing_vectors(f"{STATIC_VERSION}-training", TRAIN_MAX_CHUNKS)
    try:
        embedder.fit([text for _, text in corpus])
    except EmbeddingError as exc:
        log.info("default embedding not trained: %s", exc)
