"""Answers as text for the terminal and as markdown for hover / chat.

Refusals are said in plain words, followed by the places retrieval came closest, so a refusal is
still a lead the user can follow.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..core.answers import Answered, Citation, ClaimSpan, GapSpan, Refused, RetrievedRef
from ..core.wording import label, reason

_TOP_RETRIEVED = 5


def where(citation: Citation | RetrievedRef) -> str:
    """``path:10-14``: the form terminals and editors turn into a link."""
    return f"{citation.path}:{citation.start_line}-{citation.end_line}"


def place(citation: Citation | RetrievedRef) -> str:
    """``path:L10-14`` (``path:L10`` for one line): how hover and both editors' chats say it."""
    start, end = citation.start_line, citation.end_line
    return f"{citation.path}:L{start}" + (f"-{end}" if end != start else "")


def _quote_lines(quote: str) -> list[str]:
    return [line.rstrip() for line in quote.strip("\n").split("\n")]


def answer_to_text(answer: Answered | Refused) -> str:
    if isinstance(answer, Refused):
        lines = [f"{label('no_answer')}: {reason(answer.reason)}"]
        if answer.detail:
            lines.append(answer.detail)
        if answer.retrieved:
            lines.append(f"{label('closest')}:")
            lines.extend(
                f"  {where(ref)}  (score {ref.score:.2f})"
                for ref in answer.retrieved[:_TOP_RETRIEVED]
            )
        return "\n".join(lines)
    lines = []
    for span in answer.spans:
        lines.append(span.text)
        if isinstance(span, ClaimSpan):
            for citation in span.citations:
                lines.append(f"  {where(citation)}")
                lines.extend(f"      {line}" for line in _quote_lines(citation.quote))
    if answer.note:
        lines.append(f"(note: {answer.note})")
    return "\n".join(lines)


def _escape(text: str) -> str:
    """Markdown link text: brackets would end the link early."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


# A code span as CommonMark reads it: a backtick run not escaped, closed by a run as long.
_CODE_SPAN = re.compile(r"(?<![\\`])(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
_ACTIVE = re.compile(r"([\\\[\]<>])")


def inert(text: str) -> str:
    """Repository (and model) text made inert: no link, image, autolink or HTML survives, so a
    docstring's ``[x](command:...)`` or ``![](http://...)`` is shown, not followed or loaded.
    Code spans are left as they are: nothing inside them is live."""
    out, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        out.append(_ACTIVE.sub(r"\\\1", text[last : span.start()]))
        out.append(span.group())
        last = span.end()
    out.append(_ACTIVE.sub(r"\\\1", text[last:]))
    return "".join(out)


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
        quotes = "\n".join(
            "> " + inert(line) if line else ">"
            for c in span.citations
            for line in _quote_lines(c.quote)
        )
        parts.append(f"{inert(span.text)} {refs}\n\n{quotes}")
    if answer.note:
        parts.append(f"_{inert(answer.note)}_")
    return "\n\n".join(parts)
