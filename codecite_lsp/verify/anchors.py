"""Content-keyed citations resolved against the current file (pure).

A citation remembers *what* it quoted (the hash of its lines and the quote), not only *where*, so
after edits it resolves to: exact (same lines, same content), moved (the content is found
elsewhere in the file), stale (the quoted text is gone) or gone (the file is gone). Where a quote
holds is the one quote rule's answer (quotes.py), the gate's and MCP's too.
"""

from __future__ import annotations

import hashlib

from ..core.answers import Citation, Exact, Gone, Moved, Resolution, Stale
from .quotes import lines_hash, quote_problem, quote_ranges, split_lines


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
    if in_file and quote_problem(citation.quote, lines[start - 1 : end]) is None:
        # Lines around the quote changed, but the cited lines still hold it: the claim stands.
        return Exact(path=path, start_line=start, end_line=end)
    spots = quote_ranges(lines, citation.quote)
    if not spots:
        return Stale(path=path, reason="the quoted text is no longer in the file")
    new_start, new_end = _nearest(spots, start)
    return Moved(
        path=path, start_line=new_start, end_line=new_end, old_start_line=start, old_end_line=end
    )
