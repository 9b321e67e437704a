"""One writer per index folder, across processes (the server and a CLI run): an flock on
``index.lock``, which holds the writer's pid for the message a waiting writer shows."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .damage import clear_misplaced


class IndexBusy(RuntimeError):
    """Another indexer holds the index's write lock for longer than we were willing to wait."""


@contextmanager
def write_lock(
    index_dir: Path, wait_seconds: float, progress: Callable[[int, int, str], None] | None
) -> Iterator[None]:
    """Hold the index's write lock; IndexBusy after ``wait_seconds`` of waiting for another."""
    index_dir.mkdir(parents=True, exist_ok=True)
    clear_misplaced(index_dir)  # e.g. a folder made of index.lock: never locked otherwise
    path = index_dir / "index.lock"
    # O_NOFOLLOW: the pid is never written through a link, wherever it points.
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with open(fd, "a+", encoding="utf-8") as handle:
        deadline = time.monotonic() + wait_seconds
        told = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "unknown"
                if time.monotonic() > deadline:
                    raise IndexBusy(
                        f"another codecite indexer (pid {holder}) is still writing "
                        f"{index_dir}; try again when it has finished"
                    ) from None
                if progress and not told:
                    progress(0, 0, f"waiting for another indexer (pid {holder})")
                    told = True
                time.sleep(0.1)
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
