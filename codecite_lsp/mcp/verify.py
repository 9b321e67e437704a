"""Checking an agent's quote against a file's current text (pure: text in, verdict out).

An agent's citation is ``{path, start_line, end_line, quote}`` with no content hash, so it is
judged by its quote alone, through the same resolution the answers' citations use
(:func:`codecite_lsp.answer.citations.resolve`, whitespace-normalised and nothing else):

- verified: the quote is in lines start_line..end_line;
- moved: the quote is elsewhere in the file (the occurrence nearest the cited lines is given);
- stale: not verbatim anywhere, but lines very like it are (code edited since it was quoted, or a
  near-miss copy);
- not_found: nothing like it is in the file (a fabricated quote).

For the last two the nearest lines that do exist are returned verbatim, so the agent can quote
those instead of guessing again.
"""

from __future__ import annotations

import difflib
import heapq
import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from ..answer.citations import normalise_ws, resolve, split_lines
from ..core.answers import Citation, Exact, Moved

State = Literal["verified", "moved", "stale", "not_found"]

# Below this similarity the nearest lines are a different thing, not an edited copy of the quote.
STALE_SIMILARITY = 0.75
# Windows compared character by character after the cheap token-overlap ranking.
_FINALISTS = 5
# difflib is quadratic at worst: a long quote is judged by its beginning.
_COMPARE_CHARS = 4000
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Nearest:
    start_line: int
    end_line: int
    text: str  # the file's lines, verbatim
    similarity: float  # 0..1, difflib ratio of the whitespace-normalised texts


@dataclass(frozen=True)
class Verdict:
    state: State
    start_line: int  # where the quote is now (verified, moved); the cited lines otherwise
    end_line: int
    nearest: Nearest | None = None


def check_quote(path: str, start_line: int, end_line: int, quote: str, text: str) -> Verdict:
    """Where ``quote`` is in ``text`` (the file's current content) relative to the cited lines."""
    cited = Citation(
        path=path,
        start_line=start_line,
        end_line=end_line,
        quote=quote,
        content_hash="",  # none: an agent's citation is judged by its quote
        revision="",
    )
    resolution = resolve(cited, text)
    if isinstance(resolution, Exact):
        return Verdict("verified", resolution.start_line, resolution.end_line)
    if isinstance(resolution, Moved):
        return Verdict("moved", resolution.start_line, resolution.end_line)
    found = nearest_match(split_lines(text), quote, start_line)
    close = found is not None and found.similarity >= STALE_SIMILARITY
    return Verdict("stale" if close else "not_found", start_line, end_line, found)


def nearest_match(lines: list[str], quote: str, near_line: int = 1) -> Nearest | None:
    """The run of lines most like ``quote``, or None when no line shares a word with it.

    Windows as tall as the quote are ranked by how many of the quote's words they hold (kept
    up to date as the window slides, so a long file costs one pass over its words), and the
    best few are compared character by character. Ties go to the window nearest ``near_line``.
    """
    quote_lines = [line for line in split_lines(quote) if line.strip()] or [quote]
    wanted = Counter(_WORD.findall(quote))
    if not wanted or not lines:
        return None
    height = min(len(quote_lines), len(lines))
    words = [_WORD.findall(line) for line in lines]
    window: Counter[str] = Counter()
    shared = 0  # words of the quote the window holds, counted with multiplicity

    def add(line: int, step: int) -> int:
        change = 0
        for word in words[line]:
            if word in wanted:
                before = min(window[word], wanted[word])
                window[word] += step
                change += min(window[word], wanted[word]) - before
        return change

    ranked: list[tuple[int, int, int]] = []  # (shared, -distance, start index)
    for index in range(len(lines)):
        shared += add(index, 1)
        if index >= height:
            shared += add(index - height, -1)
        start = index - height + 1
        if start >= 0 and shared:
            ranked.append((shared, -abs(start + 1 - near_line), start))
    if not ranked:
        return None
    needle = normalise_ws(quote)[:_COMPARE_CHARS]
    best: Nearest | None = None
    for _, _, start in heapq.nlargest(_FINALISTS, ranked):
        block = lines[start : start + height]
        matcher = difflib.SequenceMatcher(
            None, needle, normalise_ws("\n".join(block))[:_COMPARE_CHARS]
        )
        similarity = round(matcher.ratio(), 3)
        if best is None or similarity > best.similarity:
            best = Nearest(start + 1, start + height, "\n".join(block), similarity)
    return best
