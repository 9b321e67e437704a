"""The part of a buffer a request needs: hover and ask look at the lines around the cursor, so a
20 MB unsaved buffer costs a few kilobytes of work, not a parse of the whole text (which took
41 s and 4 GB and blocked every other request)."""

from __future__ import annotations

WHOLE_BELOW_CHARS = 256 * 1024  # smaller buffers are used as they are (no copy)
CONTEXT_LINES = 400  # lines kept on each side of the cursor line
CONTEXT_CHARS = 64 * 1024  # at most this many characters on each side
MAX_LINE_CHARS = 16 * 1024  # a longer cursor line (minified code) is not explained


def around(text: str, line: int) -> tuple[str, int] | None:
    """(region, the cursor's line within it), or None when the line does not exist or is too
    long to explain. Scans only up to the cursor line; copies only the region."""
    if len(text) <= WHOLE_BELOW_CHARS:
        return text, line
    start = 0
    for _ in range(line):
        found = text.find("\n", start)
        if found < 0:
            return None  # past the end
        start = found + 1
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    if end - start > MAX_LINE_CHARS:
        return None
    first, above = start, 0
    while above < CONTEXT_LINES and first > 0 and start - first < CONTEXT_CHARS:
        first = text.rfind("\n", 0, first - 1) + 1
        above += 1
    last, below = end, 0
    while below < CONTEXT_LINES and last < len(text) and last - end < CONTEXT_CHARS:
        found = text.find("\n", last + 1)
        last = len(text) if found < 0 else found
        below += 1
    return text[first:last], above
