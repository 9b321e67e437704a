"""The text of the editor's open buffers, edited in time bounded by the edit, not the buffer.

pygls kept each buffer as one string and applied an incremental change by splitting the whole
text into lines and writing every line out again: after opening a 20 MB file, 300 one-line
edits kept the event loop busy for 37 s, and no request was answered meanwhile. Here a buffer is
a table of its lines: an edit rewrites the lines it touches and moves the table's pointers, and
the whole text is joined only when a request reads it (once per version).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from lsprotocol import types

from ..core.positions import Encoding, codepoint_index

# LSP line ends: \n, \r\n and \r only (str.splitlines also splits on \f, \x1c, U+2028...).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def split_lines(text: str) -> list[str]:
    """``text`` as lines that keep their line ends (the last one may have none)."""
    return _LINE.findall(text)


@dataclass
class Buffer:
    lines: list[str]
    version: int
    _text: str | None = None  # the joined text of this version, once asked for

    def text(self) -> str:
        if self._text is None:
            self._text = "".join(self.lines)
        return self._text

    def replace(self, change: types.TextDocumentContentChangeEvent, encoding: Encoding) -> None:
        self._text = None
        if not isinstance(change, types.TextDocumentContentChangePartial):
            self.lines = split_lines(change.text)
            return
        lines = self.lines
        start, end = change.range.start, change.range.end
        if (start.line, start.character) > (end.line, end.character):
            start, end = end, start
        first, last = min(start.line, len(lines)), min(end.line, len(lines))
        head = _line(lines, first)
        tail = _line(lines, last)
        before = head[: codepoint_index(_content(head), start.character, encoding)]
        after = tail[codepoint_index(_content(tail), end.character, encoding) :]
        # One more line on each side when a lone \r meets a \n across the edit's ends (the two
        # make a single line end), or when the edit is past a last line without a line end.
        low = first - 1 if first > 0 and not lines[first - 1].endswith("\n") else first
        high = last + 1 if after.endswith("\r") and last + 1 < len(lines) else last
        merged = "".join(lines[low:first]) + before + change.text + after
        merged += "".join(lines[last + 1 : high + 1])
        lines[low : high + 1] = split_lines(merged)


def _line(lines: list[str], index: int) -> str:
    return lines[index] if index < len(lines) else ""


def _content(line: str) -> str:
    return line.rstrip("\r\n")


class Buffers:
    """Open buffers by URI; edited on the event loop, read by worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, Buffer] = {}

    def open(self, uri: str, text: str, version: int) -> None:
        with self._lock:
            self._open[uri] = Buffer(split_lines(text), version)

    def change(
        self,
        uri: str,
        version: int,
        changes: Sequence[types.TextDocumentContentChangeEvent],
        encoding: Encoding,
    ) -> None:
        with self._lock:
            buffer = self._open.get(uri)
            if buffer is None:
                return  # a change to a buffer never opened: nothing to apply it to
            for change in changes:
                buffer.replace(change, encoding)
            buffer.version = version

    def close(self, uri: str) -> None:
        with self._lock:
            self._open.pop(uri, None)

    def text(self, uri: str) -> str | None:
        with self._lock:
            buffer = self._open.get(uri)
            return None if buffer is None else buffer.text()
