"""Reading a file a repository or an index folder holds, whatever it turns out to be.

A path that should be a small text file (a .gitignore, pyproject.toml, an index's meta.json) may
be a FIFO, whose open would wait for a writer forever, or a link to ``/dev/zero``, which reads
until memory runs out: either hangs or exhausts the process that merely opened a hostile
checkout. Every such read goes through :func:`read_regular` (I/O only, no policy).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

SMALL_FILE_BYTES = 8 << 20  # settings, ignore rules, an index's own metadata: far below this
LARGE_FILE_BYTES = 1 << 28  # a repository's file read whole, or a log: bounded all the same


class TooLarge(OSError):
    """A regular file over the limit; ``size`` is what it holds (at least)."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {limit} bytes", path)
        self.size = size


def read_regular(
    path: str | Path, limit: int = SMALL_FILE_BYTES, *, follow: bool = True
) -> tuple[bytes, os.stat_result]:
    """A regular file's bytes (at most ``limit``) and its stat. Raises OSError: as ``os.open``
    does (FileNotFoundError, PermissionError ...), EINVAL for anything but a regular file (never
    waited on: opened non-blocking), :class:`TooLarge` past ``limit``, ELOOP for a symlink when
    ``follow`` is False (as git refuses a symlinked .gitignore)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if st.st_size > limit:
            raise TooLarge(str(path), st.st_size, limit)
        data = handle.read(limit + 1)  # +1: it may have grown since fstat
    if len(data) > limit:
        raise TooLarge(str(path), len(data), limit)
    return data, st
