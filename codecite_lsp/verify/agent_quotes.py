"""Checking an agent's quote against a file's current text (pure: text in, verdict out).

An agent's citation is ``{path, start_line, end_line, quote}`` with no content hash, so it is
judged by its quote alone, through the same resolution the answers' citations use
(:func:`codecite_lsp.verify.anchors.resolve`) and so by the gate's quote rule
(:func:`codecite_lsp.verify.quotes.quote_problem`: whitespace-normalised, whole words, of
substance):

- verified: the quote holds on lines start_line..end_line;
- moved: the quote holds elsewhere in the file (the occurrence nearest the cited lines is given);
- stale: not verbatim anywhere, but lines very like it are (code edited since it was quoted, or a
  near-miss copy);
- not_found: nothing like it is in the file (a fabricated quote).

For the last two the nearest lines that do exist are returned verbatim, so the agent can quote
those instead of guessing again, and ``problem`` says when the text is in the file but fails the
rule ("e", a fragment cut inside a word).
"""

from __future__ import annotations

import difflib
import heapq
import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from ..core.answers import Citation, Exact, Moved
from .anchors import resolve
from .quotes import PROBLEMS, QuoteProblem, normalise_ws, quote_problem, split_lines

State = Literal["verified", "moved", "stale", "not_found"]

# Below this similarity the nearest lines are a different thing, not an edited copy of the quote.
STALE_SIMILARITY = 0.75
# Windows compared character by character after the cheap word-overlap ranking, per height.
_FINALISTS = 3
_MAX_HEIGHT = 400
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
    problem: QuoteProblem | None = None  # stale / not_found: why the quote does not hold


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
    lines = split_lines(text)
    found = nearest_match(lines, quote, start_line)
    close = found is not None and found.similarity >= STALE_SIMILARITY
    state: State = "stale" if close else "not_found"
    return Verdict(state, start_line, end_line, found, quote_problem(quote, lines))


def reason(verdict: Verdict) -> str | None:
    """Why a quote does not hold, in the words an agent is told (None: it holds)."""
    if verdict.state in ("verified", "moved"):
        return None
    problem = verdict.problem
    if problem is not None and problem != "quote_not_held":  # in the file, but not a quote
        return f"{PROBLEMS[problem]}; nearest holds the most similar lines"
    if verdict.state == "stale":
        return "the quote is not in the file as given; nearest holds the lines as they are now"
    if verdict.nearest is None:
        return "the quote is not in the file, and no line of it shares a word with the quote"
    return "the quote is not in the file; nearest holds the most similar lines"


def nearest_match(lines: list[str], quote: str, near_line: int = 1) -> Nearest | None:
    """The run of lines most like ``quote``, or None when no line shares a word with it.

    Windows of a few heights (as many lines as the quote has, and as many as its length in
    characters would fill here: agents often fold a multi-line signature onto one line) are
    ranked by how many of the quote's words they hold, kept up to date as each window slides,
    so a long file costs one pass over its words per height. The best few are compared
    character by character; ties go to the window nearest ``near_line``.
    """
    wanted = Counter(_WORD.findall(quote))
    needle = normalise_ws(quote)[:_COMPARE_CHARS]
    if not wanted or not lines:
        return None
    words = [_WORD.findall(line) for line in lines]
    best: Nearest | None = None
    for height in _heights(lines, quote):
        for start in _best_windows(words, wanted, height, near_line):
            block = "\n".join(lines[start : start + height])
            matcher = difflib.SequenceMatcher(None, needle, normalise_ws(block)[:_COMPARE_CHARS])
            similarity = round(matcher.ratio(), 3)
            if best is None or similarity > best.similarity:
                best = Nearest(start + 1, start + height, block, similarity)
    return best


def _heights(lines: list[str], quote: str) -> list[int]:
    """Window heights worth trying: the quote's own line count, and the lines its characters
    would fill at this file's average line length (and half and twice that)."""
    own = sum(1 for line in split_lines(quote) if line.strip()) or 1
    filled = [len(normalise_ws(line)) for line in lines if line.strip()]
    average = max(1.0, sum(filled) / len(filled)) if filled else 1.0
    spread = round(len(normalise_ws(quote)) / average)
    wanted = {own, spread // 2, spread, spread * 2}
    return sorted({min(max(1, height), len(lines), _MAX_HEIGHT) for height in wanted})


def _best_windows(
    words: list[list[str]], wanted: Counter[str], height: int, near_line: int
) -> list[int]:
    """Start indexes of the ``_FINALISTS`` windows holding most of the quote's words."""
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
    for index in range(len(words)):
        shared += add(index, 1)
        if index >= height:
            shared += add(index - height, -1)
        start = index - height + 1
        if start >= 0 and shared:
            ranked.append((shared, -abs(start + 1 - near_line), start))
    return [start for _, _, start in heapq.nlargest(_FINALISTS, ranked)]
