"""The in-memory view of the index (index/view.py) answers like LanceDB and follows every write:
a saved file's new text is found by the next search, its old text no longer is, also when the
write came from another store (the indexer's, another process's)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsp_helpers import FIXTURE as SAMPLE

from codecite_lsp.core.config import Config
from codecite_lsp.core.records import Chunk, Result, content_hash
from codecite_lsp.core.terms import whole_word
from codecite_lsp.index.indexer import Indexer
from codecite_lsp.index.texts import ChunkTexts, Wanted
from codecite_lsp.index.vector_view import VectorView
from codecite_lsp.index.view import forget_view
from codecite_lsp.retrieve.retriever import Retriever, open_retriever

# Enough small modules for the default embedder to train and store vectors.
TOPICS = [
    "def rotate_{i}(store, client):\n    old = store.current(client)\n    old.retired = True\n",
    "def sign_{i}(secret, payload):\n    return hmac_digest(secret, payload, session_token)\n",
    "def refill_{i}(bucket, elapsed):\n    bucket.tokens += elapsed * bucket.rate\n",
    "def connect_{i}(host, port):\n    sock = socket_open(host, port)\n    return sock\n",
]


@pytest.fixture
def grown(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE, repo)
    (repo / "gen").mkdir()
    for i in range(120):
        body = TOPICS[i % 4].format(i=i) + "\n\n" + TOPICS[(i + 1) % 4].format(i=i)
        (repo / "gen" / f"mod{i}.py").write_text(body)
    Indexer(repo, Config()).run()
    return repo


def places(results: list[Result]) -> list[tuple[str, int, int, float]]:
    return [
        (r.chunk.path, r.chunk.start_line, r.chunk.end_line, round(r.score, 6)) for r in results
    ]


def keys(chunks: list[Chunk]) -> list[str]:
    return [c.id for c in chunks]


def loaded(repo: Path) -> Retriever:
    retriever = open_retriever(repo, Config(), in_memory=True)
    retriever.store.wait_for_view()
    return retriever


def both(repo: Path) -> tuple[Retriever, Retriever]:
    return loaded(repo), open_retriever(repo, Config(), in_memory=False)


QUERIES = [
    "How does the store decide that the full-text index is damaged?",
    "rotate the log file",
    "chunk_from_row",
    "where are secrets skipped while scanning files",
    "`select_sources` token budget",
]


@pytest.fixture(scope="module")
def real_code(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This project's own package (real code: vector similarities are seldom exactly tied,
    where LanceDB keeps an arbitrary few of equal ones)."""
    repo = tmp_path_factory.mktemp("real") / "repo"
    shutil.copytree(
        Path(__file__).resolve().parents[3] / "codecite_lsp",
        repo / "codecite_lsp",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    Indexer(repo, Config()).run()
    return repo


def test_the_view_answers_as_lancedb_does(real_code: Path) -> None:
    fast, slow = both(real_code)
    assert fast.embedder is not None and fast.store.vector_count(fast.embedder.name) > 0
    for query in QUERIES:
        assert places(fast.search(query, 10)) == places(slow.search(query, 10)), query
        one, other = fast.retrieve(query), slow.retrieve(query)
        assert places(one.candidates) == places(other.candidates), query
        assert places(one.selected) == places(other.selected), query
        vector = fast.embedder.embed([query])[0]
        near, far = (r.store.vector_search(fast.embedder.name, vector, 20) for r in (fast, slow))
        assert [c.id for c, _ in near] == [c.id for c, _ in far], query
        assert [s for _, s in near] == pytest.approx([s for _, s in far], abs=1e-5)
    for names, column in (
        (["Store", "Indexer", "Retriever", "Chunk", "Meta"], "defines"),
        (["sql_literal"], "uses"),
    ):
        expected = keys(slow.store.naming(names, 3, column))
        assert len(expected) == 3 and keys(fast.store.naming(names, 3, column)) == expected
    path = "codecite_lsp/index/store.py"
    assert keys(fast.store.chunks_for_path(path)) == keys(slow.store.chunks_for_path(path))
    assert fast.store.references() == slow.store.references()  # the PageRank prior's graph
    middle = slow.store.chunks_for_path(path)[2]
    spans = [(path, middle.start_line, middle.end_line)]
    assert sorted(keys(fast.store.adjacent(spans))) == sorted(keys(slow.store.adjacent(spans)))
    assert len(fast.store.adjacent(spans)) == 2
    asked = [c.content_hash for c in slow.store.chunks_for_path(path)[:4]]
    asked += [asked[0], "zz" * 32, "ab", content_hash("in no chunk")]  # repeated, not hex, short
    same = [sorted(keys(r.store.tables.with_hashes(asked))) for r in (fast, slow)]
    assert len(same[0]) >= 4 and same[0] == same[1]


def test_a_saved_file_is_searched_as_saved(grown: Path) -> None:
    """Index, search, save a changed file through the indexer's update path (what didSave and
    the watcher call), search again: the new text is found, the old text is gone, and the
    vectors of the new chunk are among the vector candidates."""
    retriever = loaded(grown)
    assert retriever.embedder is not None
    before = retriever.search("refill_6", 5)
    assert before and before[0].chunk.path == "gen/mod6.py"
    assert all(
        "zebraquartz" not in r.chunk.text for r in retriever.search("zebraquartz_window", 20)
    )

    target = grown / "gen" / "mod6.py"
    target.write_text(
        "def zebraquartz_window(bucket, elapsed):\n    bucket.tokens += elapsed * bucket.rate\n"
    )
    Indexer(grown, Config()).update_paths(["gen/mod6.py"])  # another store writes, as in the server

    found = retriever.search("zebraquartz_window", 5)
    assert (
        found
        and found[0].chunk.path == "gen/mod6.py"
        and "zebraquartz_window" in found[0].chunk.text
    )
    assert all(not whole_word("refill_6", r.chunk.text) for r in retriever.search("refill_6", 20))
    assert [c.start_line for c in retriever.store.chunks_for_path("gen/mod6.py")] == [1]
    assert retriever.store.naming(["zebraquartz_window"], 5)[0].path == "gen/mod6.py"
    assert retriever.store.naming(["refill_6"], 5) == []
    vector = retriever.embedder.embed([target.read_text()])[0]
    nearest = retriever.store.vector_search(retriever.embedder.name, vector, 3)
    assert nearest[0][0].path == "gen/mod6.py" and nearest[0][1] > 0.99

    target.unlink()
    Indexer(grown, Config()).update_paths(["gen/mod6.py"])
    assert all(
        "zebraquartz" not in r.chunk.text for r in retriever.search("zebraquartz_window", 20)
    )
    assert retriever.store.chunks_for_path("gen/mod6.py") == []


def test_views_of_one_index_are_shared(grown: Path) -> None:
    """The server's search and its answerer open two stores: one copy of the rows, not two."""
    one, other = both(grown)
    assert one.store.view is not None and one.store.view.chunks.ready
    again = open_retriever(grown, Config(), in_memory=True)
    assert one.store.view is again.store.view is not None
    assert other.store.view is None


def test_writes_told_to_the_view_leave_it_as_a_fresh_load(grown: Path) -> None:
    """The server's own indexer tells the view what it wrote (no table read): after edits, a
    new file and a deletion, its look-ups answer as a view loaded afresh from the tables (scan
    order included), and the saved text is found. (Full-text scores of these generated modules
    tie, and LanceDB orders ties differently from one query to the next: searches are not
    compared.)"""
    told = loaded(grown)
    assert told.embedder is not None
    told.search("warm the vectors", 5)
    indexer = Indexer(grown, Config())
    (grown / "gen" / "mod3.py").write_text("def rotate_3(store):\n    return store.spin()\n")
    (grown / "gen" / "fresh.py").write_text("def rotate_fresh(store):\n    return store.spin()\n")
    (grown / "gen" / "mod8.py").unlink()
    for paths in (["gen/mod3.py"], ["gen/fresh.py"], ["gen/mod8.py"], ["gen/mod3.py"]):
        indexer.update_paths(paths)
    forget_view(Config().resolved_index_dir(grown))
    fresh = loaded(grown)
    assert fresh.store.view is not told.store.view
    assert told.search("rotate_fresh", 1)[0].chunk.path == "gen/fresh.py"
    assert all(r.chunk.path != "gen/mod8.py" for r in told.search("refill_8", 10))
    names = ["rotate_3", "rotate_fresh", "rotate_4", "rotate_8", "sign_5"]
    assert keys(told.store.naming(names, 3)) == keys(fresh.store.naming(names, 3))
    assert told.store.references() == fresh.store.references()
    vector = told.embedder.embed(["def rotate_fresh(store): return store.spin()"])[0]
    near, far = (r.store.vector_search(told.embedder.name, vector, 5) for r in (told, fresh))
    assert [c.id for c, _ in near] == [c.id for c, _ in far]
    assert near[0][0].path == "gen/fresh.py"


def test_texts_are_the_indexed_ones_whatever_the_working_tree_holds(grown: Path) -> None:
    """The view holds no texts: it reads them back from the working tree, and only where the
    file still holds the indexed bytes. An edit not yet indexed, a file deleted, a BOM and CRLF
    line endings: every chunk comes back with the text LanceDB holds."""
    (grown / "gen" / "bom.py").write_bytes(
        b"\xef\xbb\xbfdef crlf_one():\r\n    return 1\r\n\r\n\r\n"
        b"def crlf_two():\r\n    return 2\r\n"
    )
    Indexer(grown, Config()).update_paths(["gen/bom.py"])
    fast, slow = both(grown)
    paths = ["gen/mod6.py", "gen/mod7.py", "gen/bom.py", "keyvault/keys.py"]
    indexed = {path: slow.store.chunks_for_path(path) for path in paths}
    assert all(indexed.values()) and "\r\n" in indexed["gen/bom.py"][0].text
    assert fast.store.chunks_for_path("gen/bom.py") == indexed["gen/bom.py"]
    from_files = ChunkTexts(None, grown)  # no table: the working tree alone answers
    chunks = [c for path in paths for c in indexed[path]]
    wanted = [Wanted(c.id, c.path, c.start_byte, c.end_byte, c.content_hash, -1) for c in chunks]
    assert from_files.read(wanted) == [c.text for c in chunks]
    (grown / "gen" / "mod6.py").write_text("def edited(): pass\n")  # saved, not indexed yet
    (grown / "gen" / "mod7.py").unlink()
    for path in paths:
        assert fast.store.chunks_for_path(path) == indexed[path], path
    assert fast.store.tables.by_ids(keys(chunks)) == chunks


def test_a_text_is_never_read_from_outside_the_working_tree(tmp_path: Path) -> None:
    """A table from elsewhere (a downloaded base) may name any path: a file outside the tree is
    not read, even when its bytes hash as the row says."""
    tree, outside = tmp_path / "tree", tmp_path / "secret.txt"
    tree.mkdir()
    outside.write_text("api_key = 1234\n")
    (tree / "inside.py").write_text("x = 1\n")
    texts = ChunkTexts(None, tree)
    wanted = [
        Wanted(str(i).zfill(32), path, 0, size, content_hash(text), -1)
        for i, (path, text, size) in enumerate(
            [("../secret.txt", "api_key = 1234\n", 15), ("inside.py", "x = 1\n", 6)]
        )
    ]
    assert texts.read(wanted) == [None, "x = 1\n"]


def test_a_large_matrix_of_int8_codes_finds_the_same_neighbours(real_code: Path) -> None:
    """Past EXACT_VECTORS_MAX vectors the view holds int8 codes (a quarter of the memory): the
    nearest chunks are those of the float matrix, their cosines within 0.01."""
    import lancedb

    retriever = loaded(real_code)
    assert retriever.embedder is not None
    name = retriever.embedder.name
    index_dir = Config().resolved_index_dir(real_code)
    table = lancedb.connect(index_dir / "lance").open_table("vectors")
    exact, coded = VectorView(), VectorView(exact_max=0)
    for query in QUERIES:
        vector = retriever.embedder.embed([query])[0]
        near = dict(exact.nearest(table, name, vector, 20)[:20])
        approximate = dict(coded.nearest(table, name, vector, 20)[:20])
        shared = near.keys() & approximate.keys()
        assert len(shared) >= 17, query
        assert all(abs(near[h] - approximate[h]) < 0.01 for h in shared), query
