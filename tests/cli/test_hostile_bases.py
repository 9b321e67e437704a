"""A shared base in a local folder under hostile conditions (issue 42): two readers copying it at
once, a reader while the publisher publishes, a local copy damaged after it was made. Each run
ends with every file searchable, and a base that could not be used is said."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from object_store import FILES, clone, codecite, committed, git


def _published(tmp_path: Path) -> tuple[Path, Path]:
    ci = committed(tmp_path / "ci", FILES)
    shared = tmp_path / "shared-bases"
    assert codecite(ci, {}, "index", "--publish", str(shared)).returncode == 0
    return ci, shared


def _found(repo: Path, env: dict[str, str]) -> tuple[dict[str, list[str]], str]:
    listed = repo.parent / "queries.txt"
    listed.write_text("zebraquartz\nocelotnote\noldmarmot", encoding="utf-8")
    done = codecite(repo, env, "search", "--queries", str(listed), "--json")
    assert done.returncode == 0, done.stderr
    lines = map(json.loads, done.stdout.splitlines())
    return {line["query"]: [r["path"] for r in line["results"]] for line in lines}, done.stderr


EVERY_FILE = {
    "zebraquartz": ["kept.py"],
    "ocelotnote": ["docs/notes.md"],
    "oldmarmot": ["changed.py"],
}


def _index(repo: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "codecite_lsp", "index", "--repo", str(repo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CODECITE_EMBEDDING": "none", **env},
    )


def test_two_readers_copying_one_base_at_once_both_end_with_every_file(tmp_path: Path) -> None:
    ci, shared = _published(tmp_path)
    mine = clone(ci, tmp_path / "mine")
    env = {"CODECITE_BASE": str(shared)}
    runs = [_index(mine, env), _index(mine, env)]
    for run in runs:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    found, stderr = _found(mine, env)
    assert found == EVERY_FILE, stderr


def test_a_reader_while_the_publisher_publishes_finds_every_file(tmp_path: Path) -> None:
    ci, shared = _published(tmp_path)
    mine = clone(ci, tmp_path / "mine")
    env = {"CODECITE_BASE": str(shared)}
    (ci / "more.py").write_text("def more():\n    return 'newer commit'\n", encoding="utf-8")
    git(ci, "add", "-A")
    git(ci, "-c", "user.name=ci", "-c", "user.email=ci@example.invalid", "commit", "-qm", "more")
    publisher = subprocess.Popen(
        [sys.executable, "-m", "codecite_lsp", "index", "--publish", str(shared), "--repo",
         str(ci)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "CODECITE_EMBEDDING": "none"},
    )  # fmt: skip
    reads = 0
    while publisher.poll() is None or reads == 0:
        found, stderr = _found(mine, env)
        assert found == EVERY_FILE, stderr
        reads += 1
    assert publisher.returncode == 0, publisher.communicate()[1]


def test_a_local_copy_damaged_after_it_was_made_is_said_and_rebuilt(tmp_path: Path) -> None:
    """A copy whose table files were cut short failed every search ("run `codecite index` to
    rebuild it"), and `codecite index` rebuilt nothing: it counted the files as the base's."""
    ci, shared = _published(tmp_path)
    mine = clone(ci, tmp_path / "mine")
    env = {"CODECITE_BASE": str(shared)}
    assert codecite(mine, env, "index").returncode == 0
    damaged = sorted((mine / ".codecite" / "base").rglob("*.lance"))
    assert damaged, list((mine / ".codecite").rglob("*"))
    for data in damaged:
        if data.is_file():
            data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    # the next command finds it, says why, copies the base again and answers from it
    found, stderr = _found(mine, env)
    assert "the local copy of the base in" in stderr and "is damaged (lance/" in stderr, stderr
    assert "bytes, " in stderr and "when copied): copying it again" in stderr, stderr
    assert found == EVERY_FILE, stderr
    again = codecite(mine, env, "index")
    assert again.returncode == 0 and "damaged" not in again.stderr, again.stderr
    assert _found(mine, env)[0] == EVERY_FILE


def test_a_publisher_killed_mid_publish_leaves_a_store_that_republishes(tmp_path: Path) -> None:
    ci = committed(tmp_path / "ci", FILES)
    shared = tmp_path / "shared-bases"
    publisher = subprocess.Popen(
        [sys.executable, "-m", "codecite_lsp", "index", "--publish", str(shared), "--repo",
         str(ci)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "CODECITE_EMBEDDING": "none"},
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not shared.exists() and publisher.poll() is None:  # killed as the store is written
        assert time.monotonic() < deadline, "the publisher never wrote the store"
        time.sleep(0.01)
    publisher.kill()
    publisher.wait()
    mine = clone(ci, tmp_path / "mine")
    env = {"CODECITE_BASE": str(shared)}
    before = codecite(mine, env, "index")  # a half-written store: refused or read, never lost
    assert before.returncode == 0, before.stderr
    assert _found(mine, env)[0] == EVERY_FILE
    again = codecite(ci, {}, "index", "--publish", str(shared))
    assert again.returncode == 0, again.stderr
    assert "published the base of" in again.stdout, again.stdout
    other = clone(ci, tmp_path / "other")
    read = codecite(other, env, "index")
    assert read.returncode == 0 and "not used" not in read.stderr, read.stderr
    assert read.stdout.startswith("indexed 0 files"), read.stdout  # every file from the base
    assert _found(other, env)[0] == EVERY_FILE


def test_a_base_of_another_repository_is_refused_and_every_file_is_local(tmp_path: Path) -> None:
    _ci, shared = _published(tmp_path)
    files = {**FILES, "mine.py": "def mine():\n    return 1\n"}
    another = committed(tmp_path / "another", files)  # the same files and one more
    env = {"CODECITE_BASE": str(shared)}
    done = codecite(another, env, "index")
    assert done.returncode == 0, done.stderr
    assert f"base {shared} not used: none of the 1 bases" in done.stderr, done.stderr
    assert "is HEAD or an ancestor of it" in done.stderr
    assert done.stdout.startswith(f"indexed {len(files)} files"), done.stdout
    found, stderr = _found(another, env)
    assert found == EVERY_FILE and "not used" in stderr, stderr
