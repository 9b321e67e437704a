"""A repository the user cannot write, for real (tests/other_user.py): its index goes to the
user's cache folder, and an index someone else built in it is still read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import other_user
from other_user import reachable_tmp_path, read_only_repo_fixture  # noqa: F401 (fixtures)

from codecite_lsp.core.config import cached_index_dir


def codecite(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [*other_user.prefix(), sys.executable, "-m", "codecite_lsp", *args]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        env=other_user.environment(home, **env),
        check=False,
    )


def test_an_unwritable_repository_is_indexed_into_the_users_cache(repo: Path, tmp_path: Path):
    home = other_user.home(tmp_path)
    done = codecite(home, "index", "--repo", str(repo), "--embedding", "none")
    assert done.returncode == 0, done.stderr
    cached = cached_index_dir(repo)  # its name: the root's name and a hash of its path
    assert cached is not None
    expected = home / ".cache" / "codecite" / cached.name
    assert f"{repo} cannot be written; its index is kept in {expected}" in done.stdout
    assert (expected / "meta.json").is_file()
    assert not (repo / ".codecite").exists()

    found = codecite(home, "search", "--repo", str(repo), "rotate key", "--embedding", "none")
    assert found.returncode == 0, found.stderr
    assert "keyvault/keys.py" in found.stdout


def test_xdg_cache_home_is_where_the_index_goes(repo: Path, tmp_path: Path):
    home = other_user.home(tmp_path)
    cache = home / "elsewhere"
    done = codecite(
        home, "index", "--repo", str(repo), "--embedding", "none", XDG_CACHE_HOME=str(cache)
    )
    assert done.returncode == 0, done.stderr
    assert [p.name.startswith("repo-") for p in (cache / "codecite").iterdir()] == [True]
    assert not (home / ".cache").exists()


def test_an_index_the_user_cannot_write_still_answers(repo: Path, tmp_path: Path):
    other_user.writable_again(repo)
    built = subprocess.run(  # the index built by the owner of the repository
        [sys.executable, "-m", "codecite_lsp", "index", "--repo", str(repo), "--embedding", "none"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    for folder in [repo, repo / ".codecite", *(repo / ".codecite").rglob("*")]:
        if folder.is_dir():
            folder.chmod(0o755 if other_user.prefix() else 0o555)
    assert other_user.cannot_write(repo / ".codecite")
    home = other_user.home(tmp_path)

    found = codecite(home, "search", "--repo", str(repo), "rotate key", "--embedding", "none")
    assert found.returncode == 0, found.stderr
    assert "keyvault/keys.py" in found.stdout

    asked = codecite(home, "ask", "--repo", str(repo), "how is a key rotated?", "--json")
    assert asked.returncode == 0, asked.stderr
    assert '"path":"keyvault/keys.py"' in asked.stdout.replace(" ", "")
    assert "index not refreshed" in asked.stderr  # said, not a failure
    assert not (home / ".cache").exists()  # the index that is there was read, not rebuilt

    (repo / "keyvault" / "keys.py").write_text("def rotate_key():\n    pass\n")  # the owner edits
    updated = codecite(home, "index", "--repo", str(repo), "--embedding", "none")
    assert updated.returncode == 1  # it cannot be updated by this user: said, with the way out
    assert "Permission denied" in updated.stderr and "--index-dir DIR" in updated.stderr
