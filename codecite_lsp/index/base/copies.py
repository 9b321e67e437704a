"""A base's local copies: each held by the processes reading it, the others removed.

A reader holds a shared flock on its copy's ``base.json`` for its life; a prune removes only a
copy it can lock exclusively. Chosen over "keep the two newest": a server open for days on an
older copy survives any number of newer fetches by CLI runs, and the kernel drops the lock of a
process that dies however it dies, so no marker is ever left stale.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)

_HELD: dict[Path, IO[bytes]] = {}
_HELD_LOCK = threading.Lock()
_TEMP = re.compile(r"\.[0-9a-f]+\.tmp([0-9]+)\.")  # ``.<sha>.tmp<pid>.<thread or "gone">``


@dataclass(frozen=True)
class Removed:
    """What :func:`prune` removed from a base's copies folder."""

    copies: int = 0  # earlier copies no process read
    leftovers: int = 0  # temporary folders of processes that ended mid-copy
    freed: int = 0  # bytes

    def __str__(self) -> str:
        parts = [f"{self.copies} earlier copies of the base"] if self.copies else []
        parts += [f"{self.leftovers} half-made by ended processes"] if self.leftovers else []
        return f"removed {' and '.join(parts)}, {self.freed / 1e6:.1f} MB freed"


def hold(folder: Path) -> bool:
    """Mark the copy in ``folder`` read by this process, until it ends; False when there is no
    whole copy there (never made, removed by a prune, or damaged since it was made: then it is
    said, and set aside for a new copy)."""
    with _HELD_LOCK:
        if folder in _HELD:
            return True
        try:
            handle = (folder / "base.json").open("rb")
        except OSError:
            return False
        fcntl.flock(handle, fcntl.LOCK_SH)  # waits out a prune renaming it away (a moment)
        if not (folder / "base.json").is_file():  # it did: what is held is the removed one
            handle.close()
            return False
        damage = _damage(folder, handle)
        if damage is not None:
            handle.close()
            log.warning("the local copy of the base in %s is damaged (%s): copying it again",
                        folder, damage)  # fmt: skip
            _set_aside(folder)
            return False
        _HELD[folder] = handle
        return True


def sizes(folder: Path) -> dict[str, int]:
    """The size of each file of a copy's tables, relative to ``folder``: what :func:`hold`
    checks the copy against later (a file truncated or removed since it was made)."""
    lance = folder / "lance"
    return {
        str(path.relative_to(folder)): path.stat().st_size
        for path in sorted(lance.rglob("*"))
        if path.is_file()
    }


def _damage(folder: Path, handle: IO[bytes]) -> str | None:
    """What differs from the sizes recorded as the copy was made, or None (a copy made before
    they were recorded is not checked)."""
    try:
        recorded = json.loads(handle.read().decode("utf-8")).get("sizes", {})
    except (ValueError, AttributeError):
        return "its base.json is unreadable"
    for name, size in recorded.items():
        try:
            now = (folder / name).stat().st_size
        except OSError:
            return f"{name} is missing"
        if now != size:
            return f"{name} is {now} bytes, {size} when copied"
    return None


def _set_aside(folder: Path) -> None:
    """Rename a damaged copy out of the way (a reader then finds none), then remove it; a
    removal cut short leaves a temporary folder of an ended process, removed by a prune."""
    aside = folder.with_name(f".{folder.name}.tmp{os.getpid()}.damaged")
    try:
        os.replace(folder, aside)
    except OSError:  # another process set it aside first
        return
    shutil.rmtree(aside, ignore_errors=True)


def prune(cache_root: Path, keep: Path) -> Removed:
    """Remove the copies under ``cache_root`` that no process reads, except ``keep`` (the one
    just made) and the newest other (the fallback when the store cannot be read: most likely
    the base HEAD descended from before), and the temporary folders of processes that ended."""
    try:
        entries = list(cache_root.iterdir())
    except OSError:
        return Removed()
    copies = [p for p in entries if p != keep and (p / "base.json").is_file()]
    copies.sort(key=_fetched_at, reverse=True)
    removed = [size for p in copies[1:] if (size := _remove_unread(p)) is not None]
    stale = [p for p in entries if ended(p.name)]
    leftovers = [_size(p) for p in stale]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    done = Removed(len(removed), len(leftovers), sum(removed) + sum(leftovers))
    if done.copies or done.leftovers:
        log.info("base copies in %s: %s", cache_root, done)
    return done


def _fetched_at(folder: Path) -> float:
    try:
        return (folder / "base.json").stat().st_mtime  # written last, as the copy was made
    except OSError:  # removed meanwhile by another process's prune
        return 0.0


def _remove_unread(folder: Path) -> int | None:
    """Remove a copy unless a process holds it (None then); the bytes it took."""
    try:
        handle = (folder / "base.json").open("rb")
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # read by a live process (this one included)
            return None
        # renamed first, under the lock: a reader finds no copy rather than half of one, and a
        # removal cut short leaves a temporary folder of an ended process, removed next time
        gone = folder.with_name(f".{folder.name}.tmp{os.getpid()}.gone")
        try:
            os.replace(folder, gone)
        except OSError:
            return None
    size = _size(gone)
    shutil.rmtree(gone, ignore_errors=True)
    return size


def ended(name: str) -> bool:
    """A temporary folder whose process is no longer alive (a live one's, or one of a reused
    pid, is left: it costs disk until that process ends, never a copy being written)."""
    found = _TEMP.match(name)
    if found is None or int(found[1]) <= 0:
        return False
    try:
        os.kill(int(found[1]), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


def _size(folder: Path) -> int:
    total = 0
    for top, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):  # removed meanwhile
                total += os.lstat(os.path.join(top, name)).st_size
    return total
