"""The LanceDB store: search terms, safe filters, keyword and vector search, vectors by hash."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from codecite_lsp.core.fulltext import query_terms, search_terms
from codecite_lsp.core.records import Chunk, content_hash
from codecite_lsp.index.store import SCHEMA_VERSION, FileRecord, Store, sql_literal


def chunk(path: str, text: str, start_line: int = 1, symbol: str | None = None) -> Chunk:
    return Chunk(
        path=path,
        language="python",
        start_line=start_line,
        end_line=start_line + text.count("\n"),
        start_byte=0,
        end_byte=len(text.encode()),
        symbol=symbol,
        kind="block",
        text=text,
        content_hash=content_hash(text),
        revision="rev-" + path,
    )


def put(store: Store, *chunks: Chunk) -> None:
    """Write chunks grouped by path, each file committed with a matching file row."""
    by_path: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_path.setdefault(c.path, []).append(c)
    records = [FileRecord(p, "rev-" + p, 10, 1, len(cs), "python") for p, cs in by_path.items()]
    store.replace(by_path, records)
    store.ensure_fts()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(tmp_path / "index")


def hit_paths(store: Store, query: str, limit: int = 10) -> list[str]:
    return [c.path for c, _ in store.keyword_search(query, limit)]


# -- search terms -----------------------------------------------------------------------------


def test_search_terms_keep_whole_identifiers_and_their_parts() -> None:
    terms = search_terms("x = rotate_key(ident_42) + rotateKey", "src/auth/keys.py", None).split()
    assert {"rotate_key", "rotatekey", "rotate", "key", "ident_42", "ident", "42"} <= set(terms)
    # the path: folders, the file name whole, its stem and extension, and the plural folded
    assert {"src", "auth", "keys.py", "keys", "py", "key"} <= set(terms)


def test_search_terms_cover_the_symbol_path_and_camel_case() -> None:
    terms = set(search_terms("pass", "a.py", "AuthService.rotate_key").split())
    assert {"authservice.rotate_key", "authservice", "auth", "service", "rotate_key"} <= terms
    assert {"http", "server", "httpserver"} <= set(search_terms("HTTPServer", "a.py", None).split())


def test_plural_stemming_touches_parts_only_and_spares_ss_endings() -> None:
    terms = set(search_terms("classes policies keys access", "a.py", None).split())
    assert {"class", "policy", "key", "access"} <= terms
    assert "acces" not in terms


def test_query_terms_tokenise_like_documents_each_term_once() -> None:
    assert query_terms("rotate key rotate") == "rotate key"
    assert query_terms("ident_42").split() == ["ident_42", "ident42", "ident", "42"]
    assert query_terms("?? !! ''") == ""


def test_blob_words_are_not_terms() -> None:
    blob = "A" * 200
    assert search_terms(blob, "ab.py", None).split() == ["ab.py", "ab", "py"]


def test_single_characters_are_not_terms() -> None:
    # x, i, 0: in every other chunk, never what anyone searches for
    assert search_terms("x = f(i) + 0", "ab.py", "x").split() == ["ab.py", "ab", "py"]
    assert search_terms("x_axis", "ab.py", None).split()[:3] == ["x_axis", "xaxis", "axis"]
    assert query_terms("x y 0") == ""


# -- filters ----------------------------------------------------------------------------------


NASTY_PATHS = [
    "a'b.py",
    "x' OR '1'='1",
    "back\\slash.py",
    "trailing\\",
    "ünï cødé/文件.py",
    'dq"uote.py',
    "with space/and 'quotes'.py",
]


def test_sql_literal_doubles_quotes_only() -> None:
    assert sql_literal("a'b") == "'a''b'"
    assert sql_literal("x' OR '1'='1") == "'x'' OR ''1''=''1'"
    assert sql_literal("back\\slash") == "'back\\slash'"


def test_deleting_a_nasty_path_deletes_exactly_that_file(store: Store) -> None:
    put(store, *(chunk(p, f"value_{i} = {i}\n") for i, p in enumerate(NASTY_PATHS)))
    assert store.chunk_count() == len(NASTY_PATHS)
    for i, path in enumerate(NASTY_PATHS):
        assert [c.path for c in store.chunks_for_path(path)] == [path]
        store.delete([path])
        assert store.chunks_for_path(path) == []
        assert path not in store.files()
        # nothing else was widened into the delete
        assert store.chunk_count() == len(NASTY_PATHS) - i - 1
        assert set(store.files()) == set(NASTY_PATHS[i + 1 :])


def test_keyword_search_restricted_to_nasty_paths(store: Store) -> None:
    put(store, *(chunk(p, "shared_token here\n") for p in NASTY_PATHS), chunk("other.py", "x\n"))
    only = ["x' OR '1'='1", "ünï cødé/文件.py"]
    assert sorted(c.path for c, _ in store.keyword_search("shared_token", 10, paths=only)) == only
    assert store.keyword_search("shared_token", 10, paths=[]) == []


def test_large_path_lists_are_batched(store: Store) -> None:
    paths = [f"pkg/module_{i}.py" for i in range(1200)]
    put(store, *(chunk(p, f"def f_{i}(): pass\n") for i, p in enumerate(paths)))
    store.delete(paths[:1100])
    assert store.chunk_count() == 100
    assert len(store.files()) == 100


# -- keyword search ---------------------------------------------------------------------------


def test_whole_identifier_outranks_a_part_match(store: Store) -> None:
    put(
        store,
        chunk("two.py", "ident_2 = load()\nprint(ident_2)\n"),
        chunk("fortytwo.py", "ident_42 = load()\n"),
        chunk("unrelated.py", "nothing = here\n"),
    )
    hits = store.keyword_search("ident_42", 10)
    assert hits[0][0].path == "fortytwo.py"
    assert [c.path for c, _ in hits] == ["fortytwo.py", "two.py"]
    assert hits[0][1] > hits[1][1]


def test_natural_words_find_every_spelling(store: Store) -> None:
    put(
        store,
        chunk("web/client.ts", "export function rotateKey(id: string) {}\n"),
        chunk("service.py", "def rotate_key(client):\n    pass\n"),
        chunk("auth/keys.py", "def rotate(): pass\n"),
        chunk("readme.md", "Nothing about that here.\n"),
    )
    found = set(hit_paths(store, "rotate key"))
    assert {"web/client.ts", "service.py", "auth/keys.py"} <= found
    assert "readme.md" not in found
    assert set(hit_paths(store, "rotateKey")) >= {"web/client.ts", "service.py"}
    assert hit_paths(store, "keys.py")[0] == "auth/keys.py"


def test_rows_written_after_the_index_are_found_and_deleted_rows_are_not(store: Store) -> None:
    put(store, chunk("first.py", "alphavalue = 1\n"))
    put(store, chunk("second.py", "betavalue = 2\n"))  # after the FTS index exists
    assert store.unindexed_rows() == 1
    assert hit_paths(store, "betavalue") == ["second.py"]
    store.delete(["first.py"])
    assert hit_paths(store, "alphavalue") == []
    store.optimize()
    assert store.unindexed_rows() == 0
    assert hit_paths(store, "betavalue") == ["second.py"]


def test_keyword_search_on_an_empty_store_and_odd_queries(store: Store) -> None:
    assert store.keyword_search("anything", 5) == []
    put(store, chunk("a.py", "value = 1\n"))
    for query in ["", "   ", "'; DROP TABLE chunks; --", '"unbalanced', "a:b OR (c", "*"]:
        assert isinstance(store.keyword_search(query, 5), list)
    assert store.chunk_count() == 1


def test_replace_is_idempotent_and_gives_a_path_exactly_its_chunks(store: Store) -> None:
    first = [chunk("a.py", "one = 1\n", 1), chunk("a.py", "two = 2\n", 2)]
    put(store, *first)
    put(store, *first)
    assert store.chunks_for_path("a.py") == first
    put(store, chunk("a.py", "three = 3\n", 1))
    assert [c.text for c in store.chunks_for_path("a.py")] == ["three = 3\n"]
    store.replace({"a.py": []}, [FileRecord("a.py", "empty", 0, 2, 0, "python")])
    assert store.chunks_for_path("a.py") == []
    assert store.files()["a.py"].chunk_count == 0


def test_orphan_chunks_without_a_file_row_are_removed(store: Store) -> None:
    put(store, chunk("kept.py", "kept = 1\n"))
    store.replace({"orphan.py": [chunk("orphan.py", "lost = 1\n")]}, [])  # crash before commit
    assert store.remove_orphans() == 1
    assert set(store.chunk_counts()) == {"kept.py"}


def test_chunk_revisions_count_rows_per_revision(store: Store) -> None:
    put(store, chunk("a.py", "x = 1\n", 1), chunk("a.py", "y = 2\n", 2), chunk("b.py", "z\n"))
    assert store.chunk_revisions(["a.py", "c.py"]) == {"a.py": {"rev-a.py": 2}}


# -- vectors ----------------------------------------------------------------------------------


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_vectors_are_keyed_by_content_hash_and_reused_after_a_rename(store: Store) -> None:
    a = chunk("a.py", "def north(): pass\n")
    b = chunk("b.py", "def east(): pass\n")
    put(store, a, b)
    missing = store.missing_vectors("emb", 10)
    assert sorted(missing) == sorted([(a.content_hash, a.text), (b.content_hash, b.text)])
    store.put_vectors("emb", [a.content_hash, b.content_hash], np.stack([unit(1, 0), unit(0, 1)]))
    assert store.missing_vectors("emb", 10) == []
    assert store.vector_count("emb") == 2
    assert store.missing_vectors("other-embedder", 10) != []

    chunks_version = store.versions()["chunks"]
    hits = store.vector_search("emb", unit(1, 0.1), 2)
    assert [c.path for c, _ in hits] == ["a.py", "b.py"]
    assert hits[0][1] == pytest.approx(float(unit(1, 0) @ unit(1, 0.1)), abs=1e-4)
    assert store.versions()["chunks"] == chunks_version  # vectors never rewrite chunks

    store.delete(["a.py"])
    put(store, chunk("moved/a.py", a.text))  # same content, new path
    assert store.missing_vectors("emb", 10) == []
    assert [c.path for c, _ in store.vector_search("emb", unit(1, 0), 1)] == ["moved/a.py"]


def test_put_vectors_twice_keeps_one_row_per_hash(store: Store) -> None:
    a = chunk("a.py", "x = 1\n")
    put(store, a)
    store.put_vectors("emb", [a.content_hash, a.content_hash], np.stack([unit(1, 0)] * 2))
    store.put_vectors("emb", [a.content_hash], np.stack([unit(0, 1)]))
    assert store.vector_count("emb") == 1
    with pytest.raises(ValueError, match="2 hashes but 1 vectors"):
        store.put_vectors("emb", ["h1", "h2"], np.stack([unit(1, 0)]))


def test_a_new_embedder_width_replaces_the_old_vectors(store: Store) -> None:
    a = chunk("a.py", "x = 1\n")
    put(store, a)
    store.put_vectors("small", [a.content_hash], np.stack([unit(1, 0)]))
    store.put_vectors("wide", [a.content_hash], np.stack([unit(1, 0, 0, 0)]))
    assert store.vector_count("small") == 0
    assert store.vector_count("wide") == 1
    assert store.meta.embedder == "wide" and store.meta.dim == 4
    assert store.vector_search("wide", unit(1, 0), 3) == []  # wrong width: no results


def test_optimize_drops_vectors_no_chunk_uses(store: Store) -> None:
    a, b = chunk("a.py", "xa = 1\n"), chunk("b.py", "yb = 2\n")
    put(store, a, b)
    store.put_vectors("emb", [a.content_hash, b.content_hash], np.stack([unit(1, 0), unit(0, 1)]))
    store.delete(["b.py"])
    store.optimize()
    assert store.vector_count("emb") == 1
    assert hit_paths(store, "xa") == ["a.py"]


# -- the folder -------------------------------------------------------------------------------


def test_open_creates_a_self_ignoring_folder_and_reopens_the_data(tmp_path: Path) -> None:
    index = tmp_path / "deep" / "index"
    store = Store.open(index)
    assert (index / ".gitignore").read_text() == "*\n"
    assert json.loads((index / "meta.json").read_text())["schema_version"] == SCHEMA_VERSION
    put(store, chunk("a.py", "persisted_value = 1\n"))
    again = Store.open(index)
    assert again.chunk_count() == 1
    assert [c.path for c, _ in again.keyword_search("persisted_value", 3)] == ["a.py"]


def test_a_second_handle_sees_writes_at_once(tmp_path: Path) -> None:
    reader = Store.open(tmp_path / "index")
    writer = Store.open(tmp_path / "index")
    put(writer, chunk("a.py", "fresh_value = 1\n"))
    assert reader.chunk_count() == 1
    assert [c.path for c, _ in reader.keyword_search("fresh_value", 3)] == ["a.py"]


def test_an_index_of_another_schema_version_is_rebuilt_not_misread(tmp_path: Path) -> None:
    index = tmp_path / "index"
    put(Store.open(index), chunk("a.py", "x = 1\n"))
    meta = json.loads((index / "meta.json").read_text())
    (index / "meta.json").write_text(json.dumps({**meta, "schema_version": 99}))
    assert Store.open(index).chunk_count() == 0
    (index / "meta.json").write_text("{not json")
    assert Store.open(index).chunk_count() == 0
    assert json.loads((index / "meta.json").read_text())["schema_version"] == SCHEMA_VERSION


def test_unicode_identifiers_are_terms_too(store: Store) -> None:
    terms = set(search_terms("naïve_café = größe + 1", "docs/über.md", None).split())
    assert {"naïve_café", "naïve", "café", "größe", "docs", "über.md", "über", "md"} <= terms
    put(store, chunk("i18n.py", "naïve_café = 1\n"), chunk("plain.py", "cafe = 2\n"))
    assert hit_paths(store, "naïve_café") == ["i18n.py"]


def _opened_at_once(folder: Path, threads: int) -> list[Store | BaseException]:
    """``Store.open(folder)`` in ``threads`` threads released together."""
    start = threading.Barrier(threads)
    opened: list[Store | BaseException] = []

    def opening() -> None:
        start.wait()
        try:
            opened.append(Store.open(folder))
        except Exception as exc:
            opened.append(exc)

    running = [threading.Thread(target=opening) for _ in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
    return opened


def test_two_threads_opening_a_new_index_folder_share_its_tables(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The server opens its reader and its indexer at once on a folder with no tables yet:
    each used to create them, and one took the other's half-made table for damage and removed
    it (9 damage warnings and 3 errors in 30 tries)."""
    for attempt in range(30):
        writer, reader = _opened_at_once(tmp_path / f"index-{attempt}", 2)
        assert isinstance(writer, Store) and isinstance(reader, Store), (writer, reader)
        put(writer, chunk("a.py", "def rotate_key():\n    pass\n"))
        assert reader.files() == writer.files() and "a.py" in reader.files()
    assert "damaged" not in caplog.text
