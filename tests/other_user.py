"""Running codecite for real as a user who cannot write the repository.

The tests run as root, for whom permissions do not apply, so the commands run as ``nobody``
(``setpriv``), keeping only the right to read and traverse any folder (CAP_DAC_READ_SEARCH: the
interpreter lives under /root) and never the right to write. Not as root, the repository is made
read-only with chmod instead; the test is skipped only when it stays writable anyway.

The folders live in a folder of their own under the temporary folder, open to everyone: pytest's
``tmp_path`` is below a 0700 folder, and ``access(2)`` (how Python asks "may I write here?")
ignores the capability, so every path below it would look unwritable for the wrong reason.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_helpers import FIXTURE

_AS_NOBODY = [
    "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
    "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search",
]  # fmt: skip


def place() -> Iterator[Path]:
    """A fresh folder every user can reach (for a pytest fixture), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="codecite-other-user-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for path in [folder, *folder.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IWUSR)
        shutil.rmtree(folder, ignore_errors=True)


def prefix() -> list[str]:
    """The command prefix that runs a command as the user who cannot write."""
    return _AS_NOBODY if os.geteuid() == 0 else []


def read_only_repo(tmp_path: Path) -> Path:
    """A copy of the sample repository that the user of ``prefix()`` cannot write."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    folders = [repo, *(p for p in repo.rglob("*") if p.is_dir())]
    for folder in folders:  # 0755 as root (owned by root); 0555 otherwise
        folder.chmod(0o755 if os.geteuid() == 0 else 0o555)
    if not cannot_write(repo):
        pytest.skip(f"{repo} stays writable for this user (not root, and chmod did not help)")
    return repo


def cannot_write(folder: Path) -> bool:
    probe = [*prefix(), "test", "-w", str(folder)]
    return subprocess.run(probe, check=False).returncode != 0


def home(tmp_path: Path) -> Path:
    """A home folder the user of ``prefix()`` can write (the cache goes in it)."""
    folder = tmp_path / "home"
    folder.mkdir()
    if os.geteuid() == 0:
        shutil.chown(folder, "nobody")
    return folder


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("XDG_")}
    env.pop("CODECITE_INDEX_DIR", None)
    return {**env, "HOME": str(home), **extra}


def writable_again(repo: Path) -> None:
    """Undo read_only_repo's chmod."""
    for folder in [repo, *(p for p in repo.rglob("*") if p.is_dir())]:
        folder.chmod(folder.stat().st_mode | stat.S_IWUSR)


# Fixtures for the tests that import them: ``tmp_path`` in place of pytest's, and ``repo``.
@pytest.fixture(name="tmp_path")
def reachable_tmp_path() -> Iterator[Path]:
    """Instead of pytest's, a folder the other user can reach (see the module's doc)."""
    yield from place()


@pytest.fixture(name="repo")
def read_only_repo_fixture(tmp_path: Path) -> Path:
    return read_only_repo(tmp_path)
