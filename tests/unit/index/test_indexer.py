"""The indexer: incremental updates, re-chunking, bad input, update_paths, status, locking."""

from __future__ import annotations

import dataclasses
import fcntl
import os
import re
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from corpora import write_trainable_tree

from codecite_lsp.core.config import Config
from codecite_lsp.core.records import content_hash
from codecite_lsp.index import indexer as indexer_module
from codecite_lsp.index import manifest
from codecite_lsp.index.indexer import IndexBusy, Indexer
from codecite_lsp.ingest.chunking import chunk_text

FAKE_KEY = "THISISAFAKESECRETDONOTLEAK"
SUMMARY = re.compile(
    r"^indexed (\d+) files, (\d+) chunks in [\d.]+ s "
    r"\((\d+) written, (\d+) deleted, (\d+) skipped\)( - unchanged since the last pass)?$"
)


def make(repo: Path, **settings: object) -> Indexer:
    return Indexer(repo, Config(embedding="none", **settings))  # type: ignore[arg-type]


def snapshot(ix: Indexer) -> dict[str, list[tuple[int, int, str, str]]]:
    """Every file's chunks as (start, end, content_hash, id)."""
    return {
        path: [
            (c.start_line, c.end_line, c.content_hash, c.id) for c in ix.store.chunks_for_path(path)
        ]
        for path in ix.store.files()
    }


def assert_chunks_match_files(ix: Indexer, repo: Path) -> None:
    """Each chunk's text is exactly its lines of the file on disk, and hashes agree."""
    for path in ix.store.files():
        lines = (repo / path).read_text(encoding="utf-8").splitlines(keepends=True)
        chunks = ix.store.chunks_for_path(path)
        for c in chunks:
            assert c.text == "".join(lines[c.start_line - 1 : c.end_line]), path
            assert c.content_hash == content_hash(c.text)
        assert len({c.id for c in chunks}) == len(chunks)


def test_first_run_indexes_every_file_and_skips_the_secret(repo: Path) -> None:
    ix = make(repo)
    report = ix.run()
    files = set(ix.store.files())
    assert {"keyvault/keys.py", "web/src/client.ts", "docs/operations.md"} <= files
    assert ".env" not in files
    assert any(s.path == ".env" for s in report.skipped)
    assert report.files == len(files) == report.written_files
    assert report.chunks == ix.store.chunk_count() > 0
    match = SUMMARY.match(report.summary())
    assert match, report.summary()
    assert int(match[1]) == report.files and int(match[5]) == len(report.skipped)
    assert_chunks_match_files(ix, repo)


def test_an_unchanged_repository_writes_nothing(repo: Path) -> None:
    ix = make(repo)
    ix.run()
    versions = ix.store.versions()
    before = snapshot(ix)
    meta = (repo / ".codecite" / "meta.json").stat().st_mtime_ns
    report = make(repo).run()
    assert (report.written_files, report.deleted_files, report.written_chunks) == (0, 0, 0)
    assert ix.store.versions() == versions
    assert snapshot(ix) == before
    assert (repo / ".codecite" / "meta.json").stat().st_mtime_ns == meta


def test_modifying_one_file_rewrites_only_its_chunks(repo: Path) -> None:
    ix = make(repo)
    ix.run()
    before = snapshot(ix)
    keys = repo / "keyvault" / "keys.py"
    keys.write_text(keys.read_text() + "\n\ndef purge_retired_keys():\n    return 0\n")
    report = ix.run()
    assert (report.written_files, report.deleted_files) == (1, 0)
    after = snapshot(ix)
    assert report.written_chunks == len(after["keyvault/keys.py"])
    assert {p: v for p, v in after.items() if p != "keyvault/keys.py"} == {
        p: v for p, v in before.items() if p != "keyvault/keys.py"
    }
    assert after["keyvault/keys.py"] != before["keyvault/keys.py"]
    hits = ix.store.keyword_search("purge_retired_keys", 3)
    assert hits[0][0].path == "keyvault/keys.py"
    assert_chunks_match_files(ix, repo)


def test_touching_a_file_without_changing_it_rewrites_no_chunk(repo: Path) -> None:
    ix = make(repo)
    ix.run()
    chunks_version = ix.store.versions()["chunks"]
    path = repo / "keyvault" / "tokens.py"
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
    report = ix.run()
    assert report.written_files == 0
    assert ix.store.versions()["chunks"] == chunks_version
    assert ix.store.files()["keyvault/tokens.py"].mtime_ns == path.stat().st_mtime_ns
    assert make(repo).run().written_files == 0  # and the stat shortcut holds again


def test_deleting_a_file_removes_its_chunks(repo: Path) -> None:
    ix = make(repo)
    ix.run()
    (repo / "keyvault" / "ratelimit.py").unlink()
    report = ix.run()
    assert report.deleted_files == 1
    assert "keyvault/ratelimit.py" not in ix.store.files()
    assert ix.store.chunks_for_path("keyvault/ratelimit.py") == []
    assert ix.store.keyword_search("TokenBucket", 5) == [] or all(
        c.path != "keyvault/ratelimit.py" for c, _ in ix.store.keyword_search("TokenBucket", 5)
    )


def test_a_rename_moves_the_chunks_and_keeps_their_vectors(repo: Path) -> None:
    ix = make(repo)
    ix.run()
    store = ix.store
    hashes = [h for h, _ in store.missing_vectors("test-embedder", 10_000)]
    store.put_vectors("test-embedder", hashes, np.eye(len(hashes), dtype=np.float32))
    old = [(c.start_line, c.content_hash) for c in store.chunks_for_path("keyvault/tokens.py")]
    (repo / "keyvault" / "tokens.py").rename(repo / "keyvault" / "session_tokens.py")
    report = ix.run()
    assert (report.written_files, report.deleted_files) == (1, 1)
    assert store.chunks_for_path("keyvault/tokens.py") == []
    moved = store.chunks_for_path("keyvault/session_tokens.py")
    assert [(c.start_line, c.content_hash) for c in moved] == old
    assert store.missing_vectors("test-embedder", 10_000) == []  # nothing to embed again
    assert store.vector_count("test-embedder") == len(hashes)


def test_a_new_chunk_budget_rechunks_everything_faithfully(repo: Path) -> None:
    body = "".join(
        f"def handler_{i}(request):\n    value = request.get('k{i}')\n    return value\n\n\n"
        for i in range(60)
    )
    (repo / "keyvault" / "handlers.py").write_text(body)
    ix = make(repo)
    ix.run()
    before = {c.text: c.content_hash for p in ix.store.files() for c in ix.store.chunks_for_path(p)}
    small = make(repo, chunk_budget=200)
    report = small.run()
    assert report.written_files == report.files  # every file cut again
    assert_chunks_match_files(small, repo)
    after = {
        c.text: c.content_hash for p in small.store.files() for c in small.store.chunks_for_path(p)
    }
    assert len(after) > len(before)  # the large file was cut finer
    same = before.keys() & after.keys()
    assert same  # small files keep their single chunk ...
    assert all(before[text] == after[text] for text in same)  # ... and its hash
    assert make(repo, chunk_budget=200).run().written_files == 0


def test_bad_input_is_skipped_or_indexed_and_never_crashes(repo: Path) -> None:
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0" + bytes(range(256)) * 4)
    (repo / "huge.txt").write_bytes(b"a line of text\n" * (20 * 1024 * 1024 // 15))
    (repo / "latin1.py").write_bytes(b"name = '\xe9t\xe9'\n")
    (repo / "garbage.py").write_text(
        "def (((:\n  }} class ]] lambda ::: @@\n\x0bnot python at all\n"
    )
    (repo / "empty.py").write_text("")
    (repo / 'it\'s a "file" with spaces.py').write_text("def quoted_path_function():\n    pass\n")
    (repo / "debug.log").write_text(f"leaked {FAKE_KEY}\n")  # git-ignored by *.log
    report = make(repo).run()
    reasons = {s.path: s.reason for s in report.skipped}
    assert "binary" in reasons["logo.png"]
    assert "too large" in reasons["huge.txt"]
    assert "UTF-8" in reasons["latin1.py"]
    assert ".env" in reasons
    store = make(repo).store
    files = store.files()
    assert {"garbage.py", "empty.py", 'it\'s a "file" with spaces.py'} <= set(files)
    assert files["empty.py"].chunk_count == 0
    assert not {"logo.png", "huge.txt", "latin1.py", "debug.log", ".env"} & set(files)
    hits = store.keyword_search("quoted_path_function", 3)
    assert hits[0][0].path == 'it\'s a "file" with spaces.py'
    # the fake key is nowhere in the index's bytes
    for path in (repo / ".codecite").rglob("*"):
        if path.is_file():
            assert FAKE_KEY.encode() not in path.read_bytes(), path


def test_update_paths_indexes_a_saved_file(repo: Path) -> None:
    # How quickly is bench/bench_index.py's "one saved file searchable" figure.
    ix = make(repo)
    ix.run()
    ix.update_paths([])  # warm the ignore rules, as the server's first save would
    keys = repo / "keyvault" / "keys.py"
    keys.write_text(keys.read_text() + "\ndef freshly_saved_helper():\n    return 1\n")
    report = ix.update_paths(["keyvault/keys.py"])
    hits = ix.store.keyword_search("freshly_saved_helper", 3)
    assert report.written_files == 1
    assert hits[0][0].path == "keyvault/keys.py"
    assert_chunks_match_files(ix, repo)
    assert make(repo).run().written_files == 0  # the full pass agrees with the update


def test_update_paths_deletes_gone_ignored_and_outside_paths(repo: Path) -> None:
    ix = make(repo)
    ix.run()
    (repo / "docs" / "operations.md").unlink()
    (repo / ".gitignore").write_text((repo / ".gitignore").read_text() + "web/\n")
    (repo / "new.py").write_text("def brand_new(): pass\n")
    report = ix.update_paths(
        ["docs/operations.md", ".gitignore", "web", str(repo / "new.py"), "/elsewhere/x.py"]
    )
    files = set(ix.store.files())
    assert "docs/operations.md" not in files
    assert "web/src/client.ts" not in files  # its folder is ignored now
    assert "new.py" in files  # an absolute path inside the repository
    assert report.deleted_files == 2
    shutil.rmtree(repo / "keyvault")
    ix.update_paths(["keyvault"])  # a deleted folder takes its files with it
    assert not any(p.startswith("keyvault/") for p in ix.store.files())
    assert not any(p.startswith("keyvault/") for p in ix.store.chunk_counts())


def test_update_paths_never_indexes_a_secret(repo: Path) -> None:
    ix = make(repo)
    ix.run()
    (repo / "credentials.json").write_text(f'{{"token": "{FAKE_KEY}"}}')
    ix.update_paths([".env", "credentials.json", ".codecite/meta.json"])
    assert not {".env", "credentials.json", ".codecite/meta.json"} & set(ix.store.files())


def test_pending_shrinks_during_a_run_and_status_reports_it(repo: Path) -> None:
    for i in range(30):
        (repo / f"mod_{i}.py").write_text(f"def function_{i}():\n    return {i}\n")
    ix = make(repo)
    seen: list[int] = []
    report = ix.run(progress=lambda done, total, path: seen.append(len(ix.pending)))
    assert seen[0] == report.files  # everything is pending at first
    assert ix.pending == frozenset()
    status = ix.status()
    assert status["files_indexed"] == report.files
    assert status["chunks"] == report.chunks
    assert status["pending"] == 0
    assert status["last_update"] is not None
    assert status["embedder"]["state"] == "off"


def test_a_cancelled_run_is_finished_by_the_next_one(repo: Path) -> None:
    for i in range(40):
        (repo / f"mod_{i}.py").write_text(f"def function_{i}():\n    return {i}\n")
    cancel = threading.Event()

    def progress(done: int, total: int, path: str) -> None:
        if done == 10:
            cancel.set()

    ix = make(repo)
    report = ix.run(progress=progress, cancel=cancel)
    assert report.cancelled
    assert report.summary().endswith("cancelled")
    assert 0 < report.files < 40
    assert ix.store.meta.chunk_budget is None  # no complete pass yet
    final = make(repo).run()
    assert not final.cancelled
    assert final.written_files == final.files - report.files
    assert ix.store.meta.chunk_budget == Config().chunk_budget
    assert_chunks_match_files(ix, repo)


def test_the_default_embedder_fills_vectors_after_the_chunks(repo: Path) -> None:
    for i in range(120):  # enough chunks for the default embedder to train on
        words = " ".join(f"token_{(i * 7 + j) % 50}" for j in range(12))
        (repo / f"mod_{i}.py").write_text(f"def function_{i}(request):\n    # {words}\n")
    ix = Indexer(repo, Config(embedding="default"))
    ix.run()
    store = ix.store
    hashes = {c.content_hash for p in store.files() for c in store.chunks_for_path(p)}
    status = ix.status()["embedder"]
    assert (status["state"], status["vectors"]) == ("ready", len(hashes))
    embedder_name = store.meta.embedder
    assert embedder_name and store.missing_vectors(embedder_name, 100) == []
    (repo / "keyvault" / "audit.py").write_text("def audit_rotation(log):\n    return log\n")
    ix.update_paths(["keyvault/audit.py"])  # a saved file gets its vector too
    embedder_name = store.meta.embedder  # (the default embedder may have retrained: new name)
    assert embedder_name and store.missing_vectors(embedder_name, 100) == []
    assert ix.status()["embedder"]["vectors"] == len(hashes) + 1


def test_a_keyword_only_pass_searches_at_once_and_the_next_run_fills_the_vectors(
    repo: Path,
) -> None:
    """A first search's pass (``vectors=False``): the keyword index is complete and searchable,
    no vector is written, and the pass is not recorded as complete, so the next run fills the
    vectors without reading any file again and records it."""
    write_trainable_tree(repo)
    config = Config(embedding="default", chunk_budget=100)  # a chunk per function: trainable
    ix = Indexer(repo, config)
    first = ix.run(vectors=False)
    assert first.written_files == first.files > 12
    assert ix.store.vector_count(None) == 0
    assert ix.store.keyword_search("handler_3_7", 1)[0][0].path == "module_3.py"
    assert manifest.unchanged_since_last_pass(repo, config) is None  # not complete yet
    second = Indexer(repo, config).run()
    assert (second.written_files, second.deleted_files) == (0, 0)
    store = ix.store
    hashes = {c.content_hash for path in store.files() for c in store.chunks_for_path(path)}
    assert store.vector_count(None) == len(hashes) > 100  # a vector for every chunk's text
    assert manifest.unchanged_since_last_pass(repo, config) is not None


def test_a_second_indexer_waits_then_reports_clearly(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ix = make(repo)
    ix.run()
    monkeypatch.setattr(indexer_module, "LOCK_WAIT_SECONDS", 0.3)
    with open(repo / ".codecite" / "index.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.truncate(0)
        held.write("4242")
        held.flush()
        messages: list[str] = []
        with pytest.raises(IndexBusy, match="pid 4242"):
            make(repo).run(progress=lambda d, t, m: messages.append(m))
        assert messages == ["waiting for another indexer (pid 4242)"]
        fcntl.flock(held, fcntl.LOCK_UN)
    assert make(repo).run().written_files == 0  # free again


def test_inconsistent_leftovers_of_a_crash_are_repaired(repo: Path) -> None:
    ix = make(repo)
    ix.run()
    clean = snapshot(ix)
    store = ix.store
    # chunks deleted but the file row kept (killed between the delete and the add)
    store.replace({"keyvault/keys.py": []}, [])
    # chunk rows with no file row (killed before the commit of a new file)
    readme = store.chunks_for_path("README.md")
    store.replace({"ghost.py": [dataclasses.replace(c, path="ghost.py") for c in readme]}, [])
    # doubled rows (not a state the write order can produce; repaired all the same)
    store.tables.chunks.add(
        store.tables.chunks.search().where("path = 'README.md'").limit(None).to_arrow()
    )
    # an edit's chunks written, its file row not (killed), then the edit undone: the file
    # row's revision matches the disk again and the chunk count agrees, but the rows do not
    tokens = repo / "keyvault" / "tokens.py"
    original = tokens.read_text()
    edited = chunk_text("keyvault/tokens.py", original + "# edited\n", revision="r2", budget=1800)
    assert len(edited) == len(clean["keyvault/tokens.py"])
    store.replace({"keyvault/tokens.py": edited}, [])
    os.utime(tokens, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
    report = make(repo).run()
    assert report.written_files == 3  # keys.py, tokens.py and README.md
    assert snapshot(ix) == clean
    assert "ghost.py" not in store.chunk_counts()


def test_an_ignore_file_change_alone_reconciles_every_file(repo: Path) -> None:
    ix = make(repo)
    ix.run()
    gitignore = repo / ".gitignore"
    original = gitignore.read_text()
    gitignore.write_text(original + "docs/\n")
    report = ix.update_paths([".gitignore"])
    assert "docs/operations.md" not in ix.store.files()
    assert report.deleted_files == 1
    gitignore.write_text(original)
    ix.update_paths([".gitignore"])
    assert "docs/operations.md" in ix.store.files()


def test_update_paths_refuses_paths_that_are_not_inside_the_repository(repo: Path) -> None:
    ix = make(repo)
    ix.run()
    before = snapshot(ix)
    (repo.parent / "outside.py").write_text("def outside_the_repo(): pass\n")
    report = ix.update_paths(["bad\0name.py", "../outside.py", "keyvault/../../outside.py", ".."])
    assert report.written_files == report.deleted_files == 0
    assert snapshot(ix) == before


def test_saves_leave_rows_outside_the_search_index_until_an_idle_optimize(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexer_module, "OPTIMIZE_UNINDEXED_ROWS", 1)
    ix = make(repo)
    ix.run()
    assert ix.store.unindexed_rows() == 0
    (repo / "saved.py").write_text("def saved_later(): pass\n")
    ix.update_paths(["saved.py"])
    assert ix.store.unindexed_rows() == 1  # the save did not pay for an optimize ...
    assert ix.store.keyword_search("saved_later", 1)[0][0].path == "saved.py"  # ... nor wait
    assert ix.optimize_if_due()
    assert ix.store.unindexed_rows() == 0
    assert not ix.optimize_if_due()
    assert ix.store.keyword_search("saved_later", 1)[0][0].path == "saved.py"


def test_a_code_file_holding_a_credential_never_reaches_the_index(repo: Path) -> None:
    # Built at run time: this test file must not hold a credential-shaped string itself.
    token = "ghp_" + "".join(chr(ord("a") + (i * 7) % 26) for i in range(36))
    (repo / "keyvault" / "settings.py").write_text(
        f'"""Settings."""\n\nGITHUB_TOKEN = "{token}"\nTIMEOUT = 3\n', encoding="utf-8"
    )
    ix = make(repo)
    report = ix.run()
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons["keyvault/settings.py"] == (
        "contains a credential (GitHub token) at line 3; never indexed"
    )
    files = ix.store.files()
    assert "keyvault/settings.py" not in files and "keyvault/keys.py" in files
    # Lance compresses text on disk, so read every row back rather than grepping the files.
    texts = [c.text for path in files for c in ix.store.chunks_for_path(path)]
    assert texts and not any(token in text or "GITHUB_TOKEN" in text for text in texts)


def _vocabulary_tree(repo: Path, words: list[str]) -> None:
    for i in range(12):
        body = "".join(
            f"def {words[(i + j) % len(words)]}_{i}_{j}(value):\n"
            f'    """{" ".join(words[(i * j + k) % len(words)] for k in range(6))}."""\n'
            f"    return value\n\n\n"
            for j in range(12)
        )
        (repo / f"module_{i}.py").write_text(body)


def test_after_a_checkout_storm_the_embedder_retrains_and_counts_only_live_vectors(
    tmp_path: Path,
) -> None:
    before = ["invoice", "ledger", "payment", "refund", "account", "balance", "credit", "debit"]
    after = ["sprite", "shader", "texture", "vertex", "render", "camera", "mesh", "pixel"]
    _vocabulary_tree(tmp_path, before)
    ix = Indexer(tmp_path, Config(chunk_budget=100))  # one chunk per function; static embedder
    ix.run()
    first = ix.status()
    assert first["embedder"]["state"] == "ready"
    distinct = len(ix.store.missing_vectors("no-such-embedder", 10**6))  # one vector per text
    assert first["embedder"]["vectors"] == distinct > 100
    name = ix._vectors.embedder.name if ix._vectors.embedder else ""

    for path in tmp_path.glob("module_*.py"):  # another branch: every file differs
        path.unlink()
    _vocabulary_tree(tmp_path, after)
    ix.run()

    status = ix.status()
    assert (
        ix._vectors.embedder is not None and ix._vectors.embedder.name != name
    )  # trained on the new corpus
    distinct = len(ix.store.missing_vectors("no-such-embedder", 10**6))
    assert status["embedder"]["vectors"] == distinct  # not the old ones too


def test_files_refused_for_a_lasting_reason_are_not_read_again_while_unchanged(
    repo: Path,
) -> None:
    """A server's pass on every reload of an unchanged checkout: the .jpg and the file holding
    a key were examined again each time ("indexing 98% · 3 files to go")."""
    (repo / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0\0\0JFIF" + bytes(range(256)))
    token = "ghp_" + "".join(chr(ord("a") + (i * 7) % 26) for i in range(36))  # built here
    (repo / "deploy.py").write_text(f'TOKEN = "{token}"\n', encoding="utf-8")
    first = make(repo).run()
    refused = {s.path: s.reason for s in first.skipped}
    assert "binary" in refused["photo.jpg"] and "credential" in refused["deploy.py"]

    examined: list[str] = []
    again = make(repo).run(progress=lambda done, total, path: examined.append(path))
    assert "photo.jpg" not in examined and "deploy.py" not in examined
    assert {s.path: s.reason for s in again.skipped} == refused, "still reported as skipped"

    (repo / "photo.jpg").write_text("now a text file\n", encoding="utf-8")  # its stat changes
    examined.clear()
    third = make(repo).run(progress=lambda done, total, path: examined.append(path))
    assert "photo.jpg" in examined and "photo.jpg" in make(repo).store.files()
    assert "photo.jpg" not in {s.path for s in third.skipped}
    assert "deploy.py" not in examined
