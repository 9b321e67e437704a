"""Where a workspace root's index is kept (which folders may be roots: service/forbidden_roots.py).

A root whose index folder cannot be written (a checkout owned by another user, an index another
user built in it) is indexed into the user's cache folder instead, and said so; it is refused in
plain words only when that cannot be written either, or ``index_dir`` was chosen.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.config import Config, cached_index_dir


def unwritable(index_dir: Path) -> str | None:
    """Why the index cannot be kept in ``index_dir``, in plain words; None when it can."""
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create the index folder {index_dir} ({exc.strerror or exc})"
    if not os.access(index_dir, os.W_OK | os.X_OK):
        return f"cannot write to the index folder {index_dir} (permission denied)"
    return None


def cache_instead(root: Path, config: Config) -> Path | None:
    """The user's cache folder for the index of a root whose own index folder cannot be
    written; None when the user chose ``index_dir``, or the cache cannot be written either."""
    if config.index_dir:
        return None
    cached = cached_index_dir(root)
    return cached if cached is not None and unwritable(cached) is None else None
