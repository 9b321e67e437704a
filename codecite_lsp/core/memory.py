"""Keep the process's memory close to what it holds: few malloc arenas, and freed memory given
back to the system after a whole-index pass or loading the index into memory."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os

_M_ARENA_MAX = -8  # glibc's mallopt() parameter number
ARENAS_MAX = 4


def cap_arenas() -> None:
    """glibc gives each thread that meets a locked heap an arena of its own, up to 8 per core,
    and LanceDB's threads use many: freed memory stays behind in each of them. A cold index of
    194k chunks peaked at 756 MB of RSS with the default and 559 MB with two arenas; a user's
    own ``MALLOC_ARENA_MAX`` wins. Call it before LanceDB starts its threads."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return
    with contextlib.suppress(AttributeError, OSError):  # glibc only; others have no such call
        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, min(ARENAS_MAX, max(2, os.cpu_count() or 2)))


def release() -> None:
    """The server lives as long as the editor, and the allocators keep freed pages (~150 MB
    after the stdlib's index)."""
    import pyarrow as pa  # loaded already by the index pass or the read that calls this

    gc.collect()
    pa.default_memory_pool().release_unused()
    with contextlib.suppress(AttributeError, OSError):  # glibc only; others have no such call
        ctypes.CDLL(None).malloc_trim(0)
