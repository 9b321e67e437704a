"""`codecite index` and `search` on hostile repositories (issue 10): every run ends with the
rest indexed, the refused files listed with a reason, and a usable index."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def codecite(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CODECITE_EMBEDDING": "none"}
    return subprocess.run(
        [sys.executable, "-m", "codecite_lsp", *args, "--repo", str(repo)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "good.py").write_text("def rotate_key(store):\n    return store.rotate()\n")
    return root


def test_the_271_byte_markdown_file_is_indexed_not_a_crash(repo: Path) -> None:
    (repo / "a.md").write_text("# T\n\n" + ">" * 260 + " word\n")
    (repo / "b.md").write_text("# L\n\n" + "".join("  " * i + "- a\n" for i in range(300)))
    done = codecite(repo, "index", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "indexed 3 files" in done.stdout
    found = codecite(repo, "search", "word")
    assert found.returncode == 0 and "a.md:1-3" in found.stdout


def test_a_file_name_that_is_not_utf8_is_skipped_and_the_rest_indexed(repo: Path) -> None:
    with open(os.path.join(os.fsencode(repo), b"caf\xe9.py"), "w") as handle:
        handle.write("def cafe():\n    return 1\n")
    os.mkdir(os.path.join(os.fsencode(repo), b"dossier_\xff"))
    done = codecite(repo, "index", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "indexed 1 files" in done.stdout
    assert "skipped caf\\xe9.py: file name is not valid UTF-8" in done.stderr
    assert "skipped dossier_\\xff: file name is not valid UTF-8" in done.stderr
    found = codecite(repo, "search", "rotate_key")
    assert found.returncode == 0 and "good.py:1-2" in found.stdout
