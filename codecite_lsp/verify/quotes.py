"""The quote rule (pure): how a quote is normalised, hashed and found on lines.

One module decides "this quote holds on these lines" (:func:`quote_problem`, :func:`quote_ranges`)
so the gate, citation resolution and MCP's ``verify_citations`` can never disagree; the hashes
here are the content keys citations keep.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from ..core.records import normalise_newlines
from ..core.terms import word_char


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


MIN_QUOTE_CHARS = 8  # non-space characters a quote needs when it holds no identifier
MIN_IDENTIFIER = 3
_KEYWORDS = frozenset(
    """def class return self cls none true false null nil undefined if else elif for while in is
    and or not import from as with try except finally pass var let const function fn func pub
    this new end then do use mut""".split()  # noqa: SIM905 - a word list reads better as prose
)
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")

QuoteProblem = Literal["empty_quote", "quote_not_held", "quote_cuts_token", "quote_too_trivial"]
PROBLEMS: dict[QuoteProblem, str] = {
    "empty_quote": "the quote is empty",
    "quote_not_held": "the quote is not in those lines",
    "quote_cuts_token": "the quote starts or ends inside a word; quote whole words",
    "quote_too_trivial": f"the quote is too short to show anything: quote a name, "
    f"{MIN_QUOTE_CHARS}+ characters, or the whole line",
}


def has_substance(needle: str) -> bool:
    """Whether a normalised quote says something wherever it sits: an identifier of 3+
    characters that is not a keyword, or 8+ non-space characters ("e" verifies nothing)."""
    if len(needle.replace(" ", "")) >= MIN_QUOTE_CHARS:
        return True
    return any(
        len(name) >= MIN_IDENTIFIER and name.lower() not in _KEYWORDS
        for name in _IDENTIFIER.findall(needle)
    )


# A line quoted whole made only of these words and punctuation is structure, not evidence.
_BLOCK_WORDS = frozenset(
    [
        "else",
        "try",
        "finally",
        "do",
        "then",
        "end",
        "begin",
        "fi",
        "done",
        "esac",
        "endif",
        "endfor",
        "endwhile",
    ]
)


def line_has_substance(line: str) -> bool:
    """Whether a line, quoted whole, shows anything: a name, number or literal, not a lone
    bracket or block word ("pass" does; ")" and "else:" do not)."""
    return any(word.lower() not in _BLOCK_WORDS for word in re.findall(r"\w+", line))


@dataclass(frozen=True)
class _Spot:
    first: int  # 1-based line numbers of the occurrence
    last: int
    on_words: bool  # neither starts nor ends inside a word
    whole_lines: bool  # exactly lines first..last, nothing cut off either end


def _spots(lines: Sequence[str], needle: str) -> Iterator[_Spot]:
    """Every occurrence of the normalised ``needle`` in the normalised lines, in order."""
    # One normalised string for all lines, with the offset where each line starts, so a quote
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
    position = haystack.find(needle)
    while position >= 0:
        end = position + len(needle)
        first = bisect_right(starts, position) - 1
        last = bisect_right(starts, end - 1) - 1
        left = position == 0 or not (word_char(haystack[position - 1]) and word_char(needle[0]))
        right = end == len(haystack) or not (word_char(haystack[end]) and word_char(needle[-1]))
        whole = position == starts[first] and end == starts[last] + len(pieces[last])
        yield _Spot(owners[first], owners[last], left and right, whole)
        position = haystack.find(needle, position + 1)


def _holds(spot: _Spot, needle: str, substantial: bool) -> bool:
    # A short line quoted whole ("pass") is all there is to quote there, if it shows anything.
    return spot.on_words and (substantial or (spot.whole_lines and line_has_substance(needle)))


def quote_problem(quote: str, lines: Sequence[str]) -> QuoteProblem | None:
    """The quote rule: why ``quote`` does not hold on exactly ``lines``, or None when it does.

    It holds when, whitespace-normalised (the only leniency), it occurs within those lines, that
    occurrence neither starts nor ends inside a word, and it has substance (:func:`has_substance`)
    or is those whole lines. The gate, citation resolution and MCP ``verify_citations`` all ask
    this function, so "verified" means one thing."""
    needle = normalise_ws(quote)
    if not needle:
        return "empty_quote"
    substantial = has_substance(needle)
    found = on_words = False
    for spot in _spots(lines, needle):  # the first occurrence that holds settles it
        if _holds(spot, needle, substantial):
            return None
        found, on_words = True, on_words or spot.on_words
    if not found:
        return "quote_not_held"
    return "quote_too_trivial" if on_words else "quote_cuts_token"


def quote_ranges(lines: Sequence[str], quote: str) -> list[tuple[int, int]]:
    """Every (start_line, end_line), 1-based, on which the quote holds by :func:`quote_problem`:
    the lines of each whole-word occurrence of substance."""
    needle = normalise_ws(quote)
    if not needle:
        return []
    substantial = has_substance(needle)
    return [
        (spot.first, spot.last)
        for spot in _spots(lines, needle)
        if _holds(spot, needle, substantial)
    ]
