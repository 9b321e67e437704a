"""`python -m codecite_lsp` started inside the repository (the editors' fallback command, and
what a user types), and the parsing workers it starts there: the repository's own modules must
never shadow the standard library nor run, and a worker that cannot start must fail the pass with
its reason, not blame every file nor throw the index away."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

NO_WORKER = Path(__file__).parents[1] / "fixtures" / "no_worker"

APP = '''def rotate_api_key(store, user):
    """Replace the user's API key with a fresh one and revoke the old key."""
    old = store.key_for(user)
    store.revoke(old)
    return store.issue(user)
'''


def codecite(repo: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codecite_lsp", *argv, "--repo", "."],
        cwd=repo,
        env={**os.environ, "CODECITE_EMBEDDING": "none", "RUST_LOG": "error", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_repository_named_like_the_standard_library_is_indexed_and_never_run(
    tmp_path: Path,
) -> None:
    ran = tmp_path / "ran"
    repo = tmp_path / "repo"
    hostile = f"open({str(ran)!r}, 'a').write(__name__ + '\\n')\nraise ImportError('shadowed')\n"
    (repo / "json").mkdir(parents=True)
    (repo / "json" / "__init__.py").write_text(hostile)
    for name in ("logging.py", "types.py", "pickle.py"):
        (repo / name).write_text(hostile)
    (repo / "keys.py").write_text(APP)

    indexed = codecite(repo, "index")
    assert indexed.returncode == 0, indexed.stderr
    assert "indexed 5 files" in indexed.stdout and "0 skipped" in indexed.stdout, indexed.stdout
    found = codecite(repo, "search", "rotate api key")
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[0].startswith("keys.py:1-5"), found.stdout
    assert not ran.exists(), f"the repository's modules ran: {ran.read_text()}"


def test_a_worker_that_cannot_start_fails_the_pass_and_keeps_the_index(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "keys.py").write_text(APP)
    (repo / "other.py").write_text("def unrelated():\n    return 1\n")
    assert codecite(repo, "index").returncode == 0
    # An interpreter that dies while the worker starts, as a broken environment would.
    path = os.pathsep.join(filter(None, [str(NO_WORKER), os.environ.get("PYTHONPATH")]))
    (repo / "other.py").write_text("def unrelated():\n    return 2\n")

    broken = codecite(repo, "index", PYTHONPATH=path)
    assert broken.returncode == 1
    assert "the parsing worker could not start" in broken.stderr, broken.stderr
    assert "damaged" not in broken.stderr and "crashed on" not in broken.stderr, broken.stderr

    # The index is whole, and the next pass rewrites only the changed file, which it blames
    # for nothing.
    assert codecite(repo, "search", "rotate api key").stdout.startswith("keys.py:1-5")
    again = codecite(repo, "index")
    assert again.returncode == 0, again.stderr
    assert "(1 written, 0 deleted, 0 skipped)" in again.stdout, again.stdout
