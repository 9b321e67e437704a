"""Damage to the index folder itself, which no rebuild of a table repairs.

An entry of the index folder found as the wrong kind of thing (a folder where ``meta.json`` or
``index.lock`` belongs, a file or a dangling symlink where the ``lance`` folder belongs) holds
nothing of the index: it is removed, so the next write heals the index instead of failing with
the same OS error on every run. A symlink where one of its files or folders belongs is removed
too (the link, never what it points to): the index folder may come with a checkout, and writing
through the link (the lock's pid, a trace line, a table) would write wherever it points. The
index folder being a file is not ours to remove: it is said in one line with what to run
(``not_a_folder``).
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
from pathlib import Path

log = logging.getLogger(__name__)

_FILES = (
    "meta.json", "index.lock", "manifest.json", "vectors-whole.json", "trace.jsonl",
    "history.jsonl", "server.log", ".gitignore",
)  # fmt: skip
_FOLDERS = ("lance", "lance/chunks.lance", "lance/files.lance", "lance/vectors.lance", "embedding")


def clear_misplaced(index_dir: Path) -> None:
    """Remove the index folder's own entries that are not what they must be (logged)."""
    for name in (*_FILES, *_FOLDERS):
        path = index_dir / name
        if not os.path.lexists(path):
            continue
        if not path.exists():
            found = "a dangling symlink"
        elif path.is_symlink():  # its own files and folders: every write stays in the folder
            found = "a symlink"
        elif (name in _FILES) == path.is_dir():
            found = "a folder" if path.is_dir() else "a file"
        else:
            continue
        log.warning("the index's %s in %s was %s; removed to rebuild it", name, index_dir, found)
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError as exc:  # the write that follows says what is wrong
            log.warning("cannot remove %s: %s", path, exc)


def not_a_folder(index_dir: Path) -> str | None:
    """What to run when the index folder is a file or a dangling link, or None. Moving it
    away is advised for a regular file or a dangling link only: a device, pipe or socket
    (``--index-dir /dev/null``) is the system's, never the user's to move."""
    if not os.path.lexists(index_dir) or index_dir.is_dir():
        return None
    if index_dir.is_symlink() and not index_dir.exists():
        kind = "a broken symlink"
    elif index_dir.is_file():
        kind = "a file"
    else:
        return f"the index folder {index_dir} is not a folder: pass --index-dir DIR"
    quoted = shlex.quote(str(index_dir))
    return (
        f"the index folder {index_dir} is {kind}, not a folder: move it away "
        f"(mv {quoted} {quoted}.old) or pass --index-dir DIR"
    )
