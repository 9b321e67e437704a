"""Content keys of citations, and their resolution against the current file (pure).

A citation remembers *what* it quoted (the hash of its lines and the quote), not only *where*, so
after edits it resolves to: exact (same lines, same content), moved (the content is found
elsewhere in the file), stale (the quoted text is gone) or gone (the file is gone).

The text helpers here are shared with the gate so both sides hash and normalise identically.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Sequence

from ..core.answers import Citation, Exact, Gone, Moved, Resolution, Stale
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


def _nearest(ranges: list[tuple[int, int]], old_start: int) -> tuple[int, int]:
    # Deterministic choice among several matches: closest to the old position, earlier on a tie.
    return min(ranges, key=lambda r: (abs(r[0] - old_start), r[0]))


def _block_matches(lines: list[str], size: int, wanted: str) -> list[tuple[int, int]]:
    stripped = [line.rstrip() for line in lines]
    found = []
    for index in range(len(lines) - size + 1):
        block = "\n".join(stripped[index : index + size])
        if hashlib.sha256(block.encode("utf-8")).hexdigest() == wanted:
            found.append((index + 1, index + size))
    return found


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


def resolve(citation: Citation, current_text: str | None) -> Resolution:
    """Where the cited content is now. ``current_text`` is the file's text, None if deleted."""
    path = citation.path
    if current_text is None:
        return Gone(path=path, reason="file deleted")
    lines = split_lines(current_text)
    start, end = citation.start_line, citation.end_line
    size = end - start + 1
    in_file = 1 <= start <= end <= len(lines)
    if citation.content_hash:
        if in_file and lines_hash(lines[start - 1 : end]) == citation.content_hash:
            return Exact(path=path, start_line=start, end_line=end)
        blocks = _block_matches(lines, size, citation.content_hash) if size > 0 else []
        if blocks:
            new_start, new_end = _nearest(blocks, start)
            return Moved(
                path=path,
                start_line=new_start,
                end_line=new_end,
                old_start_line=start,
                old_end_line=end,
            )
    spots = quote_ranges(lines, citation.quote)
    if not spots:
        return Stale(path=path, reason="the quoted text is no longer in the file")
    new_start, new_end = _nearest(spots, start)
    if start <= new_start and new_end <= end:
        # Lines around the quote changed, but the cited lines still hold it: the claim stands.
        return Exact(path=path, start_line=start, end_line=end)
    return Moved(
        path=path, start_line=new_start, end_line=new_end, old_start_line=start, old_end_line=end
    )
