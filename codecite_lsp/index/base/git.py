"""The git queries a base needs: the commit a checkout is at, its lineage, its changes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .layout import BaseError

_GIT_TIMEOUT = 30.0


def _git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BaseError(f"git could not be run in {repo}: {exc}") from None
    if done.returncode != 0:
        raise BaseError(f"{repo} has no git commit to match a base with ({done.stderr.strip()})")
    return done.stdout


def head_commit(repo: Path) -> str:
    return _git(repo, "rev-parse", "HEAD").strip()


def ancestors(repo: Path) -> list[str]:
    """HEAD and every commit it descends from, newest first."""
    return _git(repo, "rev-list", "HEAD").split()


def tracked_changes(repo: Path) -> list[str]:
    """Tracked files whose working-tree content differs from HEAD."""
    lines = _git(repo, "status", "--porcelain", "--untracked-files=no").splitlines()
    return [line[3:] for line in lines if line.strip()]
