"""Answers as text for the terminal and as markdown for hover / chat.

Refusals are said in plain words, followed by the places retrieval came closest, so a refusal is
still a lead the user can follow.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..core.answers import Answered, Citation, ClaimSpan, GapSpan, Refused, RetrievedRef
from ..core.wording import label, reason
from ..ingest.languages import language_for_path

_TOP_RETRIEVED = 5


def where(citation: Citation | RetrievedRef) -> str:
    """``path:10-14``: the form terminals and editors turn into a link."""
    return f"{citation.path}:{citation.start_line}-{citation.end_line}"


def place(citation: Citation | RetrievedRef) -> str:
    """``path:L10-14`` (``path:L10`` for one line): how hover and both editors' chats say it."""
    start, end = citation.start_line, citation.end_line
    return f"{citation.path}:L{start}" + (f"-{end}" if end != start else "")


_SIBLING_CLAUSE = re.compile(r"(else|elif|except|finally)\b")
_OPENS_BLOCK = (":", "{", "(", "[")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _depth(line: str) -> int:
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def _first_line_indent(lines: list[str]) -> int | None:
    """The indentation the first line had, when a later line shows it: the line that closes the
    first line's bracket, or an `else`-like clause of the block the first line opens."""
    depth = first_depth = _depth(lines[0])
    opens_block = lines[0].endswith(":")
    for line in lines[1:]:
        stripped = line.lstrip()
        closes_first = first_depth > 0 and depth + _depth(stripped[:1]) == 0
        if stripped[:1] in ")]}" and closes_first:
            return _indent(line)
        if depth == 0 and opens_block and _SIBLING_CLAUSE.match(stripped):
            return _indent(line)
        depth += _depth(line)
    return None


def _quote_lines(quote: str, first_indent: str | None = None) -> list[str]:
    """A quote's lines as the code reads. A quote starts at its first word, so its first line lost
    the indentation the others kept: given back as ``first_indent`` (read from the file by a
    caller that has it), all lines then lose their common indentation; without it the others
    are shifted left to sit under it (display only: the verified quote is unchanged)."""
    lines = [line.rstrip() for line in quote.strip("\n").split("\n")]
    rest = [line for line in lines[1:] if line.strip()]
    if first_indent is not None and _indent(lines[0]) == 0:
        lines[0] = first_indent + lines[0]
        common = min(_indent(line) for line in [lines[0], *rest])
        return [line[common:] for line in lines]
    if not rest or _indent(lines[0]) > 0:
        return lines
    cut = _first_line_indent(lines)
    if cut is None:
        deepest_common = min(_indent(line) for line in rest)
        nested = lines[0].endswith(_OPENS_BLOCK) and deepest_common >= 4
        cut = deepest_common - 4 if nested else deepest_common
    if any(_indent(line) < cut for line in rest):
        return lines
    return [lines[0]] + [line[cut:] for line in lines[1:]]


Indent = Callable[[Citation], "str | None"]  # the first cited line's indentation, when known


def answer_to_text(answer: Answered | Refused, indent: Indent | None = None) -> str:
    if isinstance(answer, Refused):
        lines = [f"{label('no_answer')}: {reason(answer.reason)}"]
        if answer.detail:
            lines.append(answer.detail)
        if answer.retrieved:
            lines.append(f"{label('closest')}:")
            lines.extend(
                f"  {where(ref)}  (relevance {ref.score:.2f})"
                for ref in answer.retrieved[:_TOP_RETRIEVED]
            )
        return "\n".join(lines)
    lines = []
    for span in answer.spans:
        lines.append(span.text)
        if isinstance(span, ClaimSpan):
            for citation in span.citations:
                lines.append(f"  {where(citation)}")
                shown = _quote_lines(citation.quote, indent(citation) if indent else None)
                lines.extend(f"      {line}" for line in shown)
    if answer.note:
        lines.append(f"(note: {answer.note})")
    return "\n".join(lines)


def _escape(text: str) -> str:
    """Markdown link text: brackets would end the link early."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


# A code span as CommonMark reads it: a backtick run not escaped, closed by a run as long.
_CODE_SPAN = re.compile(r"(?<![\\`])(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
# What can start a link, image, autolink or HTML outside a code span: a bracket, a backslash,
# `<` before a tag, comment or URI, `>` opening a line (a block quote). An arrow (`->`, `a < b`)
# is left alone: escaped it reads `-\>` where the backslash is not hidden (Neovim).
_ACTIVE = re.compile(r"([\\\[\]]|<(?=[A-Za-z/!?])|^\s*>)", re.MULTILINE)


def inert(text: str) -> str:
    """Repository (and model) text made inert: no link, image, autolink or HTML survives, so a
    docstring's ``[x](command:...)`` or ``![](http://...)`` is shown, not followed or loaded.
    Code spans are left as they are: nothing inside them is live."""
    out, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        out.append(_ACTIVE.sub(_escaped, text[last : span.start()]))
        out.append(span.group())
        last = span.end()
    out.append(_ACTIVE.sub(_escaped, text[last:]))
    return "".join(out)


def _escaped(match: re.Match[str]) -> str:
    found = match.group()
    return found[:-1] + "\\" + found[-1]  # a line's indent stays in front of its `\>`


def _quoted(citation: Citation) -> str:
    """Quoted code as a fenced block in the file's language (highlighted by VS Code and Neovim
    alike); quoted prose (docs, plain text) as a block quote."""
    lines = _quote_lines(citation.quote)
    language = language_for_path(citation.path)
    if language is None or language == "markdown":
        return "\n".join("> " + inert(line) if line else ">" for line in lines)
    body = "\n".join(lines)
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)  # a fence longer than any backtick run inside
    return f"{fence}{language}\n{body}\n{fence}"


def answer_to_markdown(answer: Answered | Refused, link: Callable[[Citation], str]) -> str:
    """``link(citation)`` gives the URI that opens the cited lines (the server decides its form)."""
    if isinstance(answer, Refused):
        parts = [f"**{label('no_answer')}.** {reason(answer.reason)}"]
        if answer.detail:
            parts.append(inert(answer.detail))
        if answer.retrieved:
            parts.append(
                f"{label('closest')}:\n"
                + "\n".join(f"- `{place(ref)}`" for ref in answer.retrieved[:_TOP_RETRIEVED])
            )
        return "\n\n".join(parts)
    parts = []
    for span in answer.spans:
        if isinstance(span, GapSpan):
            parts.append(f"_{inert(span.text)}_")  # set apart: a statement about the sources
            continue
        if not isinstance(span, ClaimSpan):
            parts.append(inert(span.text))
            continue
        refs = " ".join(f"[{_escape(place(c))}]({link(c)})" for c in span.citations)
        quotes = "\n\n".join(_quoted(c) for c in span.citations)
        parts.append(f"{inert(span.text)} {refs}\n\n{quotes}")
    if answer.note:
        parts.append(f"_{inert(answer.note)}_")
    return "\n\n".join(parts)
