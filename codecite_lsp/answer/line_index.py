"""An offset index of a JSON-lines log (history.jsonl): where each accepted record starts and
ends, and its sort key, so a page at any offset reads only its own lines. Reading a page by
walking the log from its end cost time in the offset (50,000 entries: 12 ms for the first page,
22.6 s at offset 49,000).

The index is a sidecar (``history.jsonl.idx``): a header (magic, bytes of the log covered) and
one fixed-width record per accepted line. Writers of the log never touch it: a reader catches it
up with the lines appended since it was written and replaces it atomically, so a crash at any
point leaves the old index or the new one, and a line written by another process, by an older
version or just before a crash is indexed by the next reader. An index that does not fit its log
(damaged, cut, from a log that was replaced) is rebuilt from the log.
"""

from __future__ import annotations

import json
import logging
import os
import struct
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.files import LARGE_FILE_BYTES, read_regular

log = logging.getLogger(__name__)

_MAGIC = b"CCLIDX1\n"
_HEADER = struct.Struct("<8sQ")  # magic, bytes of the log covered
_KEY_BYTES = 32  # an ISO 8601 time with its offset is 25
_RECORD = struct.Struct(f"<QQ{_KEY_BYTES}s")  # start, end, sort key
_SCAN_BLOCK = 1024 * 1024

# A record's sort key (for the history: its time), or None to leave the line out.
Key = Callable[[dict[str, Any]], "str | None"]


@dataclass(frozen=True)
class Table:
    """The index as read: fixed-width records after the header, oldest line first."""

    data: bytes

    def __len__(self) -> int:
        return (len(self.data) - _HEADER.size) // _RECORD.size

    def span(self, position: int) -> tuple[int, int]:
        start, end, _ = _RECORD.unpack_from(self.data, _HEADER.size + position * _RECORD.size)
        return start, end

    def key(self, position: int) -> str:
        at = _HEADER.size + position * _RECORD.size + 16
        return self.data[at : at + _KEY_BYTES].rstrip(b"\0").decode("utf-8", "replace")


class LineIndex:
    def __init__(self, log_path: Path, key: Key) -> None:
        self.log = log_path
        self.path = log_path.with_name(log_path.name + ".idx")
        self._key = key

    def table(self, *, fresh: bool = False) -> Table:
        """The index, caught up with the log (and saved when it changed); ``fresh``: built
        from the whole log, whatever the sidecar holds."""
        try:
            size = self.log.stat().st_size
        except OSError:
            return Table(_HEADER.pack(_MAGIC, 0))
        data = b"" if fresh else self._read()
        covered = self._covered(data, size)
        if covered is None:
            data, covered = _HEADER.pack(_MAGIC, 0), 0
        if covered == size:
            return Table(data)
        records, covered = self._scan(covered, size)
        data = _HEADER.pack(_MAGIC, covered) + data[_HEADER.size :] + records
        self._save(data)
        return Table(data)

    def read(self, table: Table, position: int) -> dict[str, Any] | None:
        """The record at ``position``; None when its line no longer parses (the log changed)."""
        start, end = table.span(position)
        try:
            with self.log.open("rb") as handle:
                handle.seek(start)
                record = json.loads(handle.read(end - start))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) else None

    def rebuild(self) -> Table:
        """A fresh index from the whole log, for when a record was found not to fit it."""
        return self.table(fresh=True)

    # -- the sidecar --------------------------------------------------------------------------

    def _read(self) -> bytes:
        try:
            return read_regular(self.path, LARGE_FILE_BYTES)[0]
        except OSError:
            return b""

    def _covered(self, data: bytes, size: int) -> int | None:
        """Bytes of the log the index covers, or None when it does not fit the log."""
        if len(data) < _HEADER.size or (len(data) - _HEADER.size) % _RECORD.size:
            return None
        magic, covered = _HEADER.unpack_from(data)
        if magic != _MAGIC or covered > size:
            return None
        table = Table(data)
        if len(table) and table.span(len(table) - 1)[1] > covered:
            return None
        if covered and self._byte_at(covered - 1) != b"\n":
            return None  # the log was replaced by another whose lines end elsewhere
        return int(covered)

    def _byte_at(self, position: int) -> bytes:
        try:
            with self.log.open("rb") as handle:
                handle.seek(position)
                return handle.read(1)
        except OSError:
            return b""

    def _scan(self, covered: int, size: int) -> tuple[bytes, int]:
        """Records of the whole lines from ``covered`` on, and where the last one ends (a
        line still being written, or cut by a crash, waits for its newline)."""
        out = bytearray()
        for start, end, line in _lines(self.log, covered, size):
            covered = end
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash, closed off by the next write
            key = self._key(record) if isinstance(record, dict) else None
            if key is not None:
                out += _RECORD.pack(start, end, key.encode("utf-8")[:_KEY_BYTES])
        return bytes(out), covered

    def _save(self, data: bytes) -> None:
        """Best effort: an unwritable folder only costs the next reader the same scan."""
        try:
            fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(temp, self.path)
            except BaseException:
                os.unlink(temp)
                raise
        except OSError as exc:
            log.debug("cannot save %s: %s", self.path, exc)


def _lines(path: Path, start: int, stop: int) -> Iterator[tuple[int, int, bytes]]:
    """(start, end, bytes) of each whole line in ``path[start:stop]``, a block at a time."""
    with path.open("rb") as handle:
        handle.seek(start)
        rest, at = b"", start
        while at < stop:
            block = handle.read(min(_SCAN_BLOCK, stop - at))
            if not block:
                return
            at += len(block)
            pieces = (rest + block).split(b"\n")
            rest = pieces.pop()
            for piece in pieces:
                yield start, start + len(piece) + 1, piece
                start += len(piece) + 1
