"""Which write failures are the environment's (nothing to rebuild) and how they are said."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from codecite_lsp.index.tables import unwritable

INDEX = Path("/data/idx")
LANCE_FULL = (
    "lance error: LanceError(IO): No space left on device (os error 28), "
    "/root/.cargo/registry/src/lance-file-13.0.0/src/writer/structural.rs:191:9"
)


def _raised_from(cause: BaseException) -> RuntimeError:
    try:
        try:
            raise cause
        except BaseException as inner:
            raise RuntimeError("the write failed") from inner
    except RuntimeError as outer:
        return outer


@pytest.mark.parametrize(
    "exc,said",
    [
        (OSError(errno.ENOSPC, "No space left on device"), "the disk is full"),
        (RuntimeError(LANCE_FULL), "the disk is full"),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), "the disk quota is exceeded"),
        (_raised_from(OSError(errno.ENOMEM, "Cannot allocate memory")), "out of memory"),
        (MemoryError(), "out of memory"),
        (OSError(errno.EROFS, "Read-only file system"), "its file system is read-only"),
        (PermissionError(errno.EACCES, "Permission denied"), "permission denied"),
    ],
    ids=["python", "lance", "quota", "chained", "MemoryError", "read-only", "permission"],
)
def test_a_full_disk_or_no_memory_is_said_with_what_to_do(exc: BaseException, said: str) -> None:
    found = unwritable(exc, INDEX)
    assert found is not None and said in str(found)
    assert str(INDEX) in str(found) and "run `codecite index` again" in str(found)
    assert ".rs:" not in str(found)


@pytest.mark.parametrize(
    "exc",
    [
        RuntimeError("lance error: Corrupt file /data/idx/lance/chunks.lance/data/x.lance"),
        OSError(errno.ENOENT, "No such file or directory"),
        ValueError("os error"),
    ],
    ids=["corrupt", "missing file", "no errno"],
)
def test_damage_is_not_taken_for_the_environment(exc: BaseException) -> None:
    assert unwritable(exc, INDEX) is None
