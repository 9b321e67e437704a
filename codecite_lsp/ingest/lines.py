"""A file's lines with prefix sums of their sizes: the line table every syntax step measures
ranges on (pure: no I/O)."""

from __future__ import annotations

from itertools import accumulate
from operator import not_
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node


def lf_len(line: str) -> int:
    return len(line) - 1 if line.endswith("\r\n") else len(line)


class Lines:
    """A file's lines (``"\\n"``-terminated, the last one possibly not) with prefix sums of their
    lengths in characters and UTF-8 bytes, so any range's size is O(1)."""

    __slots__ = ("byte_starts", "char_starts", "count", "lines", "solid_starts", "source")

    def __init__(self, text: str) -> None:
        parts = text.split("\n")
        lines = [part + "\n" for part in parts[:-1]]
        if parts[-1]:
            lines.append(parts[-1])
        self.lines = lines
        self.count = len(lines)
        lengths = list(accumulate(map(len, lines), initial=0))
        # sizes count a "\r\n" as one character, so a CRLF checkout is cut like an LF one
        self.char_starts = (
            lengths if "\r" not in text else list(accumulate(map(lf_len, lines), initial=0))
        )
        # non-blank lines before each row: blank checks of any range are O(1) too
        # (a line is never empty, so "not blank" is "not all space")
        self.solid_starts = list(accumulate(map(not_, map(str.isspace, lines)), initial=0))
        if text.isascii():
            self.byte_starts = lengths
            self.source = text.encode("ascii")
        else:
            self.source = text.encode("utf-8")  # first: fails fast on a lone surrogate
            self.byte_starts = list(accumulate(map(len, map(str.encode, lines)), initial=0))

    def size(self, start: int, end: int) -> int:
        """Characters in rows start..end-1 (a "\r\n" counts as one)."""
        return self.char_starts[end] - self.char_starts[start]

    def text(self, start: int, end: int) -> str:
        return "".join(self.lines[start:end])

    def is_blank(self, row: int) -> bool:
        return self.solid_starts[row + 1] == self.solid_starts[row]

    def is_blank_range(self, start: int, end: int) -> bool:
        return self.solid_starts[end] == self.solid_starts[start]

    def last_row(self, node: Node) -> int:
        """A node ending at column 0 (it swallowed a newline) ends on the row before."""
        end = node.end_point
        if end.column == 0 and end.row > node.start_point.row:
            return min(end.row - 1, self.count - 1)
        return min(end.row, self.count - 1)
