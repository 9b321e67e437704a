"""A request's paths against its root: an editor's absolute path made repository-relative, and a
citation's relative path made absolute; anything outside the root is a bad request."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..ingest.paths import repo_relative
from .errors import SessionError

if TYPE_CHECKING:
    from .privacy import Privacy


class RootParts(Protocol):
    """What a request about files uses of a Session: the root, and its privacy rules (read per
    request: a .gitignore may have changed)."""

    @property
    def root(self) -> Path: ...

    def privacy(self) -> Privacy: ...


def relative(root: Path, path: Path) -> str:
    rel = repo_relative(str(path.resolve()), [str(root)])
    if rel is None:
        raise SessionError(f"{path} is not inside {root}")
    return rel


def absolute(root: Path, rel: str) -> Path:
    path = (root / rel).resolve()
    if path != root and root not in path.parents:
        raise SessionError(f"{rel!r} is outside the workspace folder {root}")
    return path
