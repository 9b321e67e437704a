"""The offline MiniLM embedder (ONNX model from a package, tokenizer from our package data) and
its vector cache keyed by content hash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from codecite_lsp.core.records import content_hash
from codecite_lsp.index.minilm import CHUNK_TOKENS, MINILM_DIM, MiniLMEmbedder, VectorCache

DATE_QUESTION = "parse a date string into a datetime"
DATE_CODE = (
    "def strptime(data_string, format='%a %b %d %H:%M:%S %Y'):\n"
    "    found = _regex_cache[format].match(data_string)\n"
    "    year, month, day = int(found['Y']), int(found['m']), int(found['d'])\n"
    "    return datetime(year, month, day)\n"
)
UNRELATED_CODE = (
    "def rmtree(path, ignore_errors=False):\n"
    "    for entry in os.scandir(path):\n"
    "        os.unlink(entry.path)\n"
    "    os.rmdir(path)\n"
)


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_loads_and_embeds_with_the_network_refused(tmp_path: Path) -> None:
    """A fresh interpreter with no model-hub settings and every socket refused embeds: the
    model and tokenizer come from installed packages, nothing is fetched."""
    script = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise OSError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from codecite_lsp.index.minilm import MiniLMEmbedder\n"
        "v = MiniLMEmbedder().embed(['parse a date string'])\n"
        "print(v.shape, round(float((v * v).sum()), 4))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["HOME"] = str(tmp_path)  # no cache of an earlier download to fall back on
    run = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"(1, {MINILM_DIM}) 1.0"
    assert not any(tmp_path.iterdir())  # nothing downloaded or cached under HOME


def test_embeds_deterministically_whatever_the_batch(embedder: MiniLMEmbedder) -> None:
    texts = [DATE_CODE, "x", UNRELATED_CODE * 20]  # a long text is cut at 128 tokens
    first = embedder.embed(texts)
    again = embedder.embed(list(reversed(texts)))[::-1]
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert first.shape == (3, MINILM_DIM) and first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(first, again, atol=1e-5)
    np.testing.assert_allclose(first, alone, atol=1e-4)  # padding in a batch changes nothing


def test_a_question_is_closer_to_the_code_that_does_it(embedder: MiniLMEmbedder) -> None:
    question, date, unrelated = embedder.embed([DATE_QUESTION, DATE_CODE, UNRELATED_CODE])
    assert question @ date > question @ unrelated + 0.15


def _record_count(cache: VectorCache) -> int:
    return cache.path.stat().st_size // (32 + MINILM_DIM * 2)


def test_cache_is_keyed_by_content_hash(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    cache = VectorCache(tmp_path, embedder)
    old = cache.vectors([content_hash(DATE_CODE)], [DATE_CODE])
    assert _record_count(cache) == 1
    # The same content again (another chunk id, same text): read back, not embedded again.
    again = cache.vectors([content_hash(DATE_CODE)] * 2, [DATE_CODE] * 2)
    assert _record_count(cache) == 1
    np.testing.assert_array_equal(again[0], old[0])
    # The chunk was edited: its new hash gets a vector of the new text, the old one is unused.
    edited = DATE_CODE.replace("datetime(", "date(")
    new = cache.vectors([content_hash(edited)], [edited])
    assert _record_count(cache) == 2
    np.testing.assert_allclose(new[0], embedder.embed([edited])[0], atol=2e-3)
    assert not np.allclose(new[0], old[0], atol=1e-4)
    # Another process (a new cache on the same folder) finds both vectors on disk.
    reopened = VectorCache(tmp_path, embedder)
    both = reopened.vectors([content_hash(DATE_CODE), content_hash(edited)], [DATE_CODE, edited])
    assert _record_count(reopened) == 2
    np.testing.assert_array_equal(both, np.vstack([old, new]))


def test_cache_survives_a_torn_write(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    cache = VectorCache(tmp_path, embedder)
    first = cache.vectors([content_hash(DATE_CODE)], [DATE_CODE])
    with cache.path.open("ab") as handle:
        handle.write(b"\x01" * 100)  # a crash in the middle of an append
    reopened = VectorCache(tmp_path, embedder)
    np.testing.assert_array_equal(reopened.vectors([content_hash(DATE_CODE)], [DATE_CODE]), first)
    reopened.vectors([content_hash(UNRELATED_CODE)], [UNRELATED_CODE])
    assert cache.path.stat().st_size % (32 + MINILM_DIM * 2) == 0  # the torn tail was cut
    fresh = VectorCache(tmp_path, embedder)
    got = fresh.vectors(
        [content_hash(DATE_CODE), content_hash(UNRELATED_CODE)], [DATE_CODE, UNRELATED_CODE]
    )
    assert _record_count(fresh) == 2
    np.testing.assert_array_equal(got[0], first[0])
    np.testing.assert_allclose(got[1], embedder.embed([UNRELATED_CODE])[0], atol=2e-3)


def test_embedding_minilm_fills_every_chunk_vector(tmp_path: Path) -> None:
    """``embedding = "minilm"``: the indexer stores a MiniLM vector per chunk, and a question in
    other words than the code finds it by vector."""
    from codecite_lsp.core.config import Config
    from codecite_lsp.index.indexer import Indexer
    from codecite_lsp.index.store import Store

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "dates.py").write_text(DATE_CODE)
    (repo / "trees.py").write_text(UNRELATED_CODE)
    config = Config(embedding="minilm", index_dir=str(tmp_path / "idx"))
    Indexer(repo, config).run()
    store = Store.open(tmp_path / "idx")
    chunks = MiniLMEmbedder(CHUNK_TOKENS)
    assert store.vector_count(chunks.name) == store.chunk_count() == 2
    # The stored vectors read 64 tokens: the rerank's 128-token vectors are kept apart.
    assert chunks.name != MiniLMEmbedder().name
    query = chunks.embed([DATE_QUESTION])[0]
    assert [c.path for c, _ in store.vector_search(chunks.name, query, 2)] == [
        "dates.py",
        "trees.py",
    ]
