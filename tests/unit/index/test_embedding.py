"""The offline default embedding, the litellm embedder and the filling of stored vectors."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import numpy as np
import pytest
from lsp_helpers import FIXTURE as SAMPLE

from codecite_lsp.core.config import Config
from codecite_lsp.core.records import Chunk, content_hash
from codecite_lsp.index import static_embedding
from codecite_lsp.index.embedder import EmbeddingError
from codecite_lsp.index.embedding import LiteLLMEmbedder, fill_vectors, make_embedder
from codecite_lsp.index.static_embedding import (
    MIN_TRAIN_CHUNKS,
    StaticEmbedder,
    static_model_path,
    train_static,
)

TOPICS = {
    "keys": "rotate the api key, retire the old key, grace period for the retired key secret",
    "tokens": "sign the session token with hmac, verify the token signature and expiry",
    "limits": "token bucket rate limiter: refill the bucket, spend one token per request",
    "net": "open a socket connection, send bytes over the socket, close the connection",
}


def corpus(copies: int = 6) -> list[str]:
    """Short texts on four topics, each phrased a few ways, so co-occurrence has structure."""
    texts = []
    for i in range(copies):
        for name, words in TOPICS.items():
            parts = words.split(", ")
            texts.append(f"def {name}_{i}():\n    # " + ", ".join(parts[i % len(parts) :] + parts))
    return texts


def make_chunks(path: str, text: str, lines_per_chunk: int = 4) -> list[Chunk]:
    lines = text.splitlines(keepends=True)
    chunks = []
    offset = 0
    for start in range(0, len(lines), lines_per_chunk):
        piece = "".join(lines[start : start + lines_per_chunk])
        size = len(piece.encode())
        chunks.append(
            Chunk(
                path=path,
                language="python",
                start_line=start + 1,
                end_line=min(start + lines_per_chunk, len(lines)),
                start_byte=offset,
                end_byte=offset + size,
                symbol=None,
                kind="block",
                text=piece,
                content_hash=content_hash(piece),
                revision=content_hash(text),
            )
        )
        offset += size
    return chunks


def store_with(tmp_path: Path, files: dict[str, str]):
    from codecite_lsp.index.store import FileRecord, Store

    store = Store.open(tmp_path / "index")
    by_path = {path: make_chunks(path, text) for path, text in files.items()}
    records = [
        FileRecord(p, content_hash(t), len(t), 0, len(by_path[p]), "python")
        for p, t in files.items()
    ]
    store.replace(by_path, records)
    return store


def sample_files() -> dict[str, str]:
    return {
        str(p.relative_to(SAMPLE)): p.read_text()
        for p in sorted(SAMPLE.rglob("*"))
        if p.is_file() and p.suffix in {".py", ".ts", ".md"}
    }


def grown_files() -> dict[str, str]:
    """The sample files plus enough topical modules to pass MIN_TRAIN_CHUNKS."""
    texts = corpus(copies=30)
    extra = {f"topics/mod{i}.py": "\n".join(texts[i * 2 : i * 2 + 2]) + "\n" for i in range(60)}
    return sample_files() | extra


def test_training_is_deterministic_and_rows_are_unit_length() -> None:
    first, second = train_static(corpus()), train_static(corpus())
    assert first.digest == second.digest
    assert np.array_equal(first.vectors, second.vectors)
    assert np.allclose(np.linalg.norm(first.vectors, axis=1), 1.0, atol=1e-5)


def test_embeddings_are_normalised_deterministic_and_topical(tmp_path: Path) -> None:
    embedder = StaticEmbedder(tmp_path / "model.npz")
    embedder.fit(corpus())
    texts = ["how is the api key rotated", TOPICS["keys"], TOPICS["net"], "", "zzqx unknownword"]
    vectors = embedder.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (5, embedder.dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors, embedder.embed(texts))
    question = vectors[0]
    assert question @ vectors[1] > question @ vectors[2] + 0.2
    # Words the model never saw still match themselves (hashed vectors).
    unseen = embedder.embed(["zzqx unknownword", "zzqx unknownword plus key"])
    assert float(vectors[4] @ unseen[1]) > 0.3


def test_a_batch_embeds_each_text_as_it_would_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch's known words are summed a block at a time: a text whose words straddle two
    blocks gets the same vector as on its own."""
    embedder = StaticEmbedder(tmp_path / "model.npz")
    embedder.fit(corpus())
    texts = [" ".join([TOPICS[name]] * (1 + i)) for i in range(5) for name in TOPICS]
    alone = np.vstack([embedder.embed([text]) for text in texts])
    monkeypatch.setattr(static_embedding, "_EMBED_BLOCK", 7)  # fewer than a text's words
    assert np.allclose(embedder.embed(texts), alone, atol=1e-6)


def test_model_is_saved_and_reloaded_under_the_same_name(tmp_path: Path) -> None:
    path = tmp_path / "embedding" / "model.npz"
    embedder = StaticEmbedder(path)
    assert embedder.name.endswith("untrained")
    with pytest.raises(EmbeddingError, match="not trained"):
        embedder.embed(["x"])
    embedder.fit(corpus())
    again = StaticEmbedder(path)
    assert again.name == embedder.name != "static-v1-untrained"
    assert np.array_equal(again.embed(["rotate key"]), embedder.embed(["rotate key"]))
    assert not list(path.parent.glob("*.tmp*"))


def test_training_and_embedding_work_with_the_network_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    embedder = make_embedder(Config(), tmp_path)
    assert isinstance(embedder, StaticEmbedder)
    embedder.fit(list(sample_files().values()) + corpus())
    assert static_model_path(tmp_path).exists()
    assert embedder.embed(["rotate api keys"]).shape == (1, embedder.dim)


def test_too_little_text_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="too little text"):
        StaticEmbedder(tmp_path / "m.npz").fit(["x"])


def test_make_embedder_choices(tmp_path: Path) -> None:
    assert make_embedder(Config(embedding="none"), tmp_path) is None
    assert isinstance(make_embedder(Config(embedding="default"), tmp_path), StaticEmbedder)
    remote = make_embedder(Config(embedding="openai/text-embedding-3-small"), tmp_path)
    assert isinstance(remote, LiteLLMEmbedder)
    assert remote.name == "litellm-openai/text-embedding-3-small"


def test_a_damaged_model_file_is_retrained_not_fatal(tmp_path: Path) -> None:
    path = static_model_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a numpy file")
    embedder = make_embedder(Config(), tmp_path)
    assert isinstance(embedder, StaticEmbedder) and embedder.model is None
    assert not path.exists()


def test_litellm_embedder_normalises_the_models_vectors() -> None:
    embedder = LiteLLMEmbedder("openai/text-embedding-3-small", batch=1, mock_response=[3.0, 4.0])
    vectors = embedder.embed(["a", "b"])
    assert vectors.shape == (2, 2) and embedder.dim == 2
    assert np.allclose(vectors, [[0.6, 0.8], [0.6, 0.8]])


def test_litellm_embedder_errors_name_the_model() -> None:
    embedder = LiteLLMEmbedder("ollama/nomic-embed-text", timeout=5)
    os.environ["OLLAMA_API_BASE"] = "http://127.0.0.1:9"  # nothing listens there
    try:
        with pytest.raises(EmbeddingError, match="ollama/nomic-embed-text"):
            embedder.embed(["a"])
    finally:
        del os.environ["OLLAMA_API_BASE"]


def test_fill_vectors_trains_on_a_cold_index_and_fills_every_chunk(tmp_path: Path) -> None:
    store = store_with(tmp_path, grown_files())
    assert store.chunk_count() >= MIN_TRAIN_CHUNKS
    embedder = make_embedder(Config(), tmp_path / "index")
    assert isinstance(embedder, StaticEmbedder)
    calls: list[tuple[int, int, str]] = []
    written = fill_vectors(store, embedder, progress=lambda *a: calls.append(a), batch=5)
    unique = len({h for h, _ in store.missing_vectors("nothing-yet", 10_000)})
    assert embedder.model is not None
    assert written == unique == store.vector_count(embedder.name)
    assert calls[0][2] == "training the default embedding"
    done = [c[0] for c in calls[1:]]
    assert done == sorted(done) and calls[-1][0] == calls[-1][1] == store.chunk_count()
    assert fill_vectors(store, embedder) == 0  # nothing left: idempotent
    hits = store.vector_search(embedder.name, embedder.embed(["retire old api key"])[0], 3)
    assert hits and all("retire" in chunk.text for chunk, _ in hits)  # the key-rotation topic


def test_a_tiny_repository_stays_keyword_only(tmp_path: Path) -> None:
    store = store_with(tmp_path, sample_files())
    assert store.chunk_count() < MIN_TRAIN_CHUNKS
    embedder = StaticEmbedder(tmp_path / "model.npz")
    assert fill_vectors(store, embedder) == 0
    assert embedder.model is None and not (tmp_path / "model.npz").exists()


def test_fill_vectors_stops_when_cancelled(tmp_path: Path) -> None:
    store = store_with(tmp_path, grown_files())
    embedder = StaticEmbedder(tmp_path / "model.npz")
    cancel = threading.Event()
    cancel.set()
    assert fill_vectors(store, embedder, cancel=cancel) == 0
    assert embedder.model is not None  # the model trained; the vectors wait for the next run
    assert store.vector_count(embedder.name) == 0


def test_a_model_failing_mid_fill_keeps_the_vectors_it_gave(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remote model that fails on its third batch: the two batches it embedded are stored
    (they cost a call each), the error reaches the caller, and the next fill does the rest."""
    store = store_with(tmp_path, grown_files())
    embedder = StaticEmbedder(tmp_path / "model.npz")
    embedder.fit([text for _, text in store.missing_vectors("corpus", 10_000)])
    real = embedder.embed
    calls: list[int] = []

    def failing(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        if len(calls) == 3:
            raise EmbeddingError("the model timed out")
        return real(texts)

    monkeypatch.setattr(embedder, "embed", failing)
    with pytest.raises(EmbeddingError, match="timed out"):
        fill_vectors(store, embedder, batch=5, train=False)
    assert store.vector_count(embedder.name) == 10
    monkeypatch.setattr(embedder, "embed", real)
    unique = len({h for h, _ in store.missing_vectors("nothing-yet", 10_000)})
    assert fill_vectors(store, embedder, batch=5, train=False) == unique - 10
    assert store.missing_vectors(embedder.name, 10_000) == []


def test_vocabulary_drift_retrains_under_a_new_name(tmp_path: Path) -> None:
    store = store_with(tmp_path, grown_files())
    embedder = StaticEmbedder(tmp_path / "model.npz")
    fill_vectors(store, embedder)
    first = embedder.name
    fill_vectors(store, embedder)
    assert embedder.name == first  # no drift, no retraining
    from codecite_lsp.index.store import FileRecord

    novel = "".join(
        f"def quasar_{i}(nebula, pulsar):\n    return spectral_nebula(pulsar, redshift)\n"
        for i in range(400)
    )
    chunks = make_chunks("astro.py", novel)
    store.replace({"astro.py": chunks}, [FileRecord("astro.py", "r", 1, 0, len(chunks), "python")])
    fill_vectors(store, embedder)
    assert embedder.name != first
    assert "nebula" in (embedder.model.vocab if embedder.model else {})
    assert store.missing_vectors(embedder.name, 100_000) == []  # every chunk re-embedded


def test_an_open_embedder_picks_up_a_model_trained_elsewhere(tmp_path: Path) -> None:
    path = tmp_path / "model.npz"
    reader, writer = StaticEmbedder(path), StaticEmbedder(path)
    writer.fit(corpus())
    assert reader.model is None
    reader.refresh()
    assert reader.name == writer.name
    path.write_bytes(b"damaged")
    reader.refresh()  # a damaged file is logged; the loaded model stays usable
    assert reader.name == writer.name and reader.embed(["key"]).shape == (1, reader.dim)
