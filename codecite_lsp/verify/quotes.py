"""The quote rule (pure): how a quote is normalised, hashed and found on lines.

One module decides "this quote holds on these lines" so the gate, citation resolution and MCP's
``verify_citations`` can never disagree; the hashes here are the content keys citations keep.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Sequence

from ..core.records import normalise_newlines


def split_lines(text: str) -> list[str]:
    """The text's lines without their endings; a final newline does not start an extra line."""
    lines = normalise_newlines(text).split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def declared_lines(text: str, count: int) -> list[str]:
    """Exactly ``count`` lines of a chunk declared to span that many: a final newline may end the
    last line or be followed by an empty last line, so the declared count decides."""
    lines = normalise_newlines(text).split("\n")[:count]
    return lines + [""] * (count - len(lines))


def fits_lines(text: str, count: int) -> bool:
    """Whether ``text`` is ``count`` whole lines (with or without a final newline)."""
    lines = normalise_newlines(text).split("\n")
    return len(lines) == count or (len(lines) == count + 1 and lines[-1] == "")


def normalise_ws(text: str) -> str:
    """The only leniency quotes get: every run of whitespace becomes one space, ends stripped."""
    return " ".join(text.split())


def lines_hash(lines: Sequence[str]) -> str:
    """Citation.content_hash: sha256 of the lines, newline-normalised and without trailing
    whitespace, so re-saving a file with CRLF endings or trimmed lines keeps its citations exact."""
    joined = "\n".join(line.rstrip() for line in lines)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def quote_hash(quote: str) -> str:
    """Citation.quote_hash: sha256 of the whitespace-normalised quote."""
    return hashlib.sha256(normalise_ws(quote).encode("utf-8")).hexdigest()


def quote_ranges(lines: list[str], quote: str) -> list[tuple[int, int]]:
    """Every (start_line, end_line) whose lines hold the whitespace-normalised quote, 1-based."""
    needle = normalise_ws(quote)
    if not needle:
        return []
    # One normalised string for the whole file, with the offset where each line starts, so a quote
    # spanning several lines is found with plain str.find.
    pieces: list[str] = []
    starts: list[int] = []
    owners: list[int] = []
    offset = 0
    for number, line in enumerate(lines, start=1):
        norm = normalise_ws(line)
        if not norm:
            continue
        if pieces:
            offset += 1  # the joining space
        starts.append(offset)
        owners.append(number)
        pieces.append(norm)
        offset += len(norm)
    haystack = " ".join(pieces)
    found = []
    position = haystack.find(needle)
    while position >= 0:
        first = owners[bisect_right(starts, position) - 1]
        last = owners[bisect_right(starts, position + len(needle) - 1) - 1]
        found.append((first, last))
        position = haystack.find(needle, position + 1)
    return found
