"""Whole statements for the offline answerer (pure): a quote is a complete statement or sentence.

A window of lines picked for matching the question may cut a statement: an argument line inside
a call (``retries=self.max_retries,``), the tail of an import list, a comment that begins in the
middle of a sentence. Such a quote is true but says nothing on its own, so the window is widened
to the whole statement (within a few lines), and dropped when that is not possible.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_WIDEN = 4  # lines a window may grow by, each way, to reach whole statements
# Quoted and template (backtick) literals, one line at a time.
STRINGS = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`")
_KEY_LIKE = re.compile(r"[\w.:-]*")  # a string used as a name: a key, a code, a header
_COMMENT_TAIL = re.compile(r"\s#.*$|\s//.*$")
_OPEN, _CLOSE = "([{", ")]}"
_SENTENCE_END = re.compile(r"""[.!?:;]["')\]]*\s*(?:\"{3}|'{3}|\*/|-->)?\s*$""")
# A line ending in a comma, an open bracket, an operator word or a block's colon (`if x:`) goes
# on below.
# A line ending in the brace of a block it opens: `if x {`, `) {`, `} else {`, `=> {`, `-> T {`;
# not a literal's (`= {`, `return {`, `f({`, Go's `Foo{`).
_BLOCK_HEAD = re.compile(r"(?:\)|\w\s|[>\]]|=>)\s*\{$(?<!\breturn \{)")
_DANGLING = re.compile(r"[,(\[{\\:]\s*$|\b(?:and|or|not|in|is)\s*$")


def without_messages(line: str) -> str:
    """``line`` with its messages and URLs blanked (``""``): what it says in code. A key-like
    string (``"empty_quote"``, ``'Content-Type'``) is a name the code uses, and stays."""
    return STRINGS.sub(lambda m: m[0] if _KEY_LIKE.fullmatch(m[0][1:-1]) else '""', line)


def opens_a_literal(line: str) -> bool:
    """Whether ``line`` leaves a bracket open that is a value's (`parts = [`, `x = f(`), not a
    block's (`var app = function(req) {`, `for x in xs:` opens none)."""
    code = _COMMENT_TAIL.sub("", STRINGS.sub('""', line)).rstrip()
    return _depth_change(code)[1] > 0 and _BLOCK_HEAD.search(code) is None


def _depth_change(line: str) -> tuple[int, int]:
    """(lowest running depth, final depth) of the brackets of one code line, strings and
    trailing comments left out."""
    code = _COMMENT_TAIL.sub("", STRINGS.sub('""', line))
    depth = lowest = 0
    for char in code:
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            lowest = min(lowest, depth)
    return lowest, depth


def _balanced(lines: Sequence[str]) -> tuple[int, int]:
    """(brackets the lines close without opening them, brackets they open and leave open)."""
    depth = lowest = 0
    for line in lines:
        low, change = _depth_change(line)
        lowest = min(lowest, depth + low)
        depth += change
    return -lowest, depth - lowest


def _open_before(lines: Sequence[str], at: int) -> int:
    """Brackets still open when line ``at`` starts, counted from the first line given, without
    the braces of blocks (`if rec != nil {`, a function's body): a statement in a block is
    whole, one inside a call or a literal (`x = {`, `Foo{`) is not."""
    blocks: list[bool] = []  # the open brackets, True for a block's brace
    for line in lines[:at]:
        code = _COMMENT_TAIL.sub("", STRINGS.sub('""', line)).rstrip()
        head = _BLOCK_HEAD.search(code) is not None
        for column, char in enumerate(code):
            if char in _OPEN:
                blocks.append(head and column == len(code) - 1)
            elif char in _CLOSE and blocks:
                blocks.pop()
    return blocks.count(False)


def whole_code(lines: Sequence[str], first: int, last: int) -> tuple[int, int] | None:
    """The window first..last widened to whole statements, or None if it cannot be. Comment
    and docstring lines are passed as empty strings: their brackets are prose."""
    start = first
    while _open_before(lines, first) > 0:  # inside a call or a list opened above the window
        if first == 0 or start - first >= MAX_WIDEN:
            return None
        first -= 1
    for _ in range(2 * MAX_WIDEN):
        unopened, unclosed = _balanced(lines[first : last + 1])
        code = _COMMENT_TAIL.sub("", STRINGS.sub('""', lines[last]))
        dangling = bool(_DANGLING.search(code))
        if not unopened and not unclosed and not dangling:
            return first, last
        if unopened and first > 0:
            first -= 1
        elif (unclosed or dangling) and last + 1 < len(lines):
            last += 1
        else:
            return None
    return None


def whole_sentences(
    lines: Sequence[str], is_doc: Sequence[bool], first: int, last: int
) -> tuple[int, int] | None:
    """A comment or docstring window from the start of a sentence to the end of one: widened
    to finish its last sentence, else cut back to the last sentence it finishes; None when it
    holds no whole sentence."""
    start = first
    while is_doc[start] and start > 0 and is_doc[start - 1]:
        if _SENTENCE_END.search(lines[start - 1]) or first - start >= MAX_WIDEN:
            break
        start -= 1
    if (
        is_doc[start]
        and start > 0
        and is_doc[start - 1]
        and not _SENTENCE_END.search(lines[start - 1])
    ):
        return None  # the sentence began further up than a window may reach
    end = last
    if is_doc[end] and not _SENTENCE_END.search(lines[end]):
        reach = end
        while reach + 1 < len(lines) and is_doc[reach + 1] and reach - last < MAX_WIDEN:
            reach += 1
            if _SENTENCE_END.search(lines[reach]):
                return start, reach
        while end >= start and is_doc[end] and not _SENTENCE_END.search(lines[end]):
            end -= 1
        if end < start:
            return None
    return start, end
