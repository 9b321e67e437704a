"""What verify_citations and open_citation answer, without MCP: the service's verdicts
(:mod:`codecite_lsp.service.agent_quotes`) as the tools' result models. Blocking; the server
runs these in worker threads.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..core.config import Config
from ..service.agent_quotes import Judged, Quoted, judge, open_quoted
from ..service.errors import Cancelled
from ..service.privacy import Missing, Unreadable
from .models import CheckOut, CitationIn, NearestOut, OpenIn, OpenOutput, VerifyOutput

MAX_EXCERPT_LINES = 400


class ToolRefusal(ValueError):
    """The call cannot be served as asked; the message is what the agent is told."""


def verify_citations(
    root: Path, config: Config, citations: Sequence[CitationIn], cancel: threading.Event
) -> VerifyOutput:
    quoted = [Quoted(c.path, c.start_line, c.end_line, c.quote) for c in citations]
    try:
        judged = judge(root, config, quoted, cancel)
    except Cancelled:
        raise ToolRefusal("cancelled") from None
    results = [_check(citation, one) for citation, one in zip(citations, judged, strict=True)]
    counts = Counter(result.state for result in results)
    summary = ", ".join(f"{count} {state}" for state, count in counts.items())
    return VerifyOutput(summary=summary, results=results)


def _check(citation: CitationIn, judged: Judged) -> CheckOut:
    found = judged.nearest
    nearest = (
        None
        if found is None
        else NearestOut(
            start_line=found.start_line,
            end_line=found.end_line,
            text=found.text,
            similarity=found.similarity,
        )
    )
    return CheckOut(
        path=citation.path,
        state=judged.state,
        cited_start_line=citation.start_line,
        cited_end_line=citation.end_line,
        start_line=judged.start_line,
        end_line=judged.end_line,
        nearest=nearest,
        reason=judged.reason,
    )


def open_citation(
    root: Path, config: Config, citation: OpenIn, context: int, cancel: threading.Event
) -> OpenOutput:
    quoted = Quoted(citation.path, citation.start_line, citation.end_line, citation.quote)
    try:
        opened = open_quoted(root, config, quoted)
    except (Unreadable, Missing) as exc:
        raise ToolRefusal(str(exc)) from None
    lines, start = opened.lines, opened.start_line
    if start > len(lines):
        raise ToolRefusal(f"{opened.path} has {len(lines)} lines; line {start} does not exist")
    end = min(opened.end_line, len(lines))
    return OpenOutput(
        path=opened.path,
        state=opened.state,
        start_line=start,
        end_line=end,
        excerpt=excerpt(lines, start, end, context),
        reason=opened.reason,
    )


def excerpt(lines: list[str], start: int, end: int, context: int) -> str:
    """Lines start..end with ``context`` lines around, numbered; cited lines marked '>'."""
    first = max(1, start - context)
    last = min(len(lines), end + context, first + MAX_EXCERPT_LINES - 1)
    width = len(str(last))
    shown = [
        f"{'>' if start <= number <= end else ' '} {number:>{width}} | {lines[number - 1]}"
        for number in range(first, last + 1)
    ]
    if last < min(len(lines), end + context):
        shown.append(f"... ({min(len(lines), end + context) - last} more lines not shown)")
    return "\n".join(shown)
