"""`codecite index` on an unchanged checkout answers from a stat walk against the manifest of the
last pass, without importing lancedb; any change to the files, the settings or the index folder
runs the normal pass, which brings the index up to date (issue 11, item 5)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
UNCHANGED = "unchanged since the last pass"
# What an index pass needs and the unchanged answer must not load.
HEAVY = ("lancedb", "pyarrow", "numpy", "tree_sitter")


def codecite(repo: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess, with -X importtime: stderr also lists every module imported."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "CODECITE_EMBEDDING": "none", **env}
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "codecite_lsp", *args, "--repo", str(repo)],
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
    )


def imported(done: subprocess.CompletedProcess[str]) -> set[str]:
    lines = (line.split("|")[-1] for line in done.stderr.splitlines() if "import time:" in line)
    return {name.strip().split(".")[0] for name in lines}


def messages(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if not line.startswith("import time:")]


def index(repo: Path, **env: str) -> subprocess.CompletedProcess[str]:
    done = codecite(repo, "index", "--quiet", **env)
    assert done.returncode == 0, messages(done)
    return done


def finds(repo: Path, query: str) -> str:
    done = codecite(repo, "search", query)
    assert done.returncode == 0, messages(done)
    return done.stdout


@pytest.fixture
def indexed(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "vault.py").write_text("def rotate_key(store):\n    return store.rotate()\n")
    (root / "ledger.py").write_text("def settle_account(books):\n    return books.close()\n")
    (root / "blob.dat").write_bytes(b"\x00\x01binary")  # refused when read, not by the walk
    (root / ".env").write_text("TOKEN=x\n")  # refused by the walk
    first = index(root)
    assert UNCHANGED not in first.stdout and "lancedb" in imported(first)
    return root


def test_an_unchanged_checkout_is_answered_without_opening_the_index(indexed: Path) -> None:
    first = messages(codecite(indexed, "index", "--quiet", CODECITE_INDEX_BYPASS_MANIFEST="1"))
    again = index(indexed)
    assert UNCHANGED in again.stdout
    assert "indexed 2 files, 2 chunks" in again.stdout
    assert "(0 written, 0 deleted, 2 skipped)" in again.stdout
    assert not imported(again) & set(HEAVY)
    # The same refusals as the pass that read the files, the content-refused one included.
    assert messages(again) == first
    assert any(line.startswith("skipped blob.dat: binary") for line in first)
    assert any(line.startswith("skipped .env") for line in first)


@pytest.mark.parametrize("change", ["edit", "add", "delete"])
def test_a_changed_file_runs_the_pass(indexed: Path, change: str) -> None:
    if change == "edit":
        (indexed / "vault.py").write_text("def rotate_key(store):\n    return quasar_spin()\n")
        expected, word = "indexed 2 files", "quasar_spin"
    elif change == "add":
        (indexed / "pkg").mkdir()
        (indexed / "pkg" / "nova.py").write_text("def quasar_spin():\n    return 1\n")
        expected, word = "indexed 3 files", "quasar_spin"
    else:
        (indexed / "ledger.py").unlink()
        expected, word = "indexed 1 files", "settle_account"
    done = index(indexed)
    assert UNCHANGED not in done.stdout and expected in done.stdout
    assert "lancedb" in imported(done)
    found = finds(indexed, word)
    assert (change == "delete") == ("ledger.py" not in found and "no results" in found)
    assert UNCHANGED in index(indexed).stdout  # and the new state is remembered


def test_a_new_ignore_rule_runs_the_pass(indexed: Path) -> None:
    (indexed / ".gitignore").write_text("ledger.py\n")
    done = index(indexed)
    assert UNCHANGED not in done.stdout and "1 deleted" in done.stdout


def test_another_indexing_setting_runs_the_pass_an_answering_one_does_not(indexed: Path) -> None:
    assert UNCHANGED in index(indexed, CODECITE_CONTEXT_CHUNKS="3").stdout
    done = index(indexed, CODECITE_CHUNK_BUDGET="900")
    assert UNCHANGED not in done.stdout and "lancedb" in imported(done)


def test_a_damaged_index_folder_runs_the_pass_which_repairs_it(indexed: Path) -> None:
    fts = sorted((indexed / ".codecite" / "lance" / "chunks.lance" / "_indices").rglob("*"))
    files = [path for path in fts if path.is_file()]
    assert files, "the pass built a full-text index"
    files[0].unlink()
    done = index(indexed)
    assert UNCHANGED not in done.stdout and "lancedb" in imported(done)
    assert "vault.py:1-2" in finds(indexed, "rotate_key")
    assert UNCHANGED in index(indexed).stdout


def test_a_damaged_manifest_runs_the_pass(indexed: Path) -> None:
    (indexed / ".codecite" / "manifest.json").write_text('{"files": [')
    done = index(indexed)
    assert UNCHANGED not in done.stdout and "0 written" in done.stdout
    assert UNCHANGED in index(indexed).stdout
