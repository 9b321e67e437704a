"""Editor positions: the position encodings LSP clients negotiate, and a character offset
counted in one of them turned into an index into a line (pure)."""

from __future__ import annotations

from typing import Literal

Encoding = Literal["utf-16", "utf-32", "utf-8"]


def codepoint_index(line: str, character: int, encoding: Encoding) -> int:
    """LSP positions count UTF-16 code units by default; convert to an index into ``line``."""
    if encoding == "utf-32":
        return min(character, len(line))
    units = 0
    for index, char in enumerate(line):
        if units >= character:
            return index
        if encoding == "utf-16":
            units += 2 if ord(char) > 0xFFFF else 1
        else:
            units += len(char.encode("utf-8"))
    return len(line)
