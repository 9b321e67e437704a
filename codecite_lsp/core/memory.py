"""Give memory back to the system after a whole-index pass or loading the index into memory."""

from __future__ import annotations

import contextlib
import ctypes
import gc


def release() -> None:
    """The server lives as long as the editor, and the allocators keep freed pages (~150 MB
    after the stdlib's index)."""
    import pyarrow as pa  # loaded already by the index pass or the read that calls this

    gc.collect()
    pa.default_memory_pool().release_unused()
    with contextlib.suppress(AttributeError, OSError):  # glibc only; others have no such call
        ctypes.CDLL(None).malloc_trim(0)
