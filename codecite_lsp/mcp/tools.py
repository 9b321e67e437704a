"""What verify_citations and open_citation do, without MCP: read the current files (through
service/privacy) and judge each quote (:mod:`.verify`). Blocking; the server runs these in
worker threads.

Neither needs the index: they answer against the files as they are now, also while a first
index pass is still running.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..core.config import Config
from ..ingest.scan import SourceFile
from ..service.privacy import Missing, Privacy, Unreadable
from ..verify.quotes import PROBLEMS, split_lines
from .models import CheckOut, CitationIn, NearestOut, OpenIn, OpenOutput, OpenState, VerifyOutput
from .verify import Verdict, check_quote

MAX_EXCERPT_LINES = 400


class ToolRefusal(ValueError):
    """The call cannot be served as asked; the message is what the agent is told."""


def verify_citations(
    root: Path, config: Config, citations: Sequence[CitationIn], cancel: threading.Event
) -> VerifyOutput:
    privacy = Privacy.for_root(root, config)

    @functools.cache  # several quotes from one file: read it once
    def read(path: str) -> SourceFile | Exception:
        try:
            return privacy.read(path)
        except (Unreadable, Missing) as exc:
            return exc

    results = []
    for citation in citations:
        if cancel.is_set():
            raise ToolRefusal("cancelled")
        results.append(_check(citation, read(citation.path)))
    counts = Counter(result.state for result in results)
    summary = ", ".join(f"{count} {state}" for state, count in counts.items())
    return VerifyOutput(summary=summary, results=results)


def _check(citation: CitationIn, source: SourceFile | Exception) -> CheckOut:
    cited = CheckOut(
        path=citation.path,
        state="not_found",
        cited_start_line=citation.start_line,
        cited_end_line=citation.end_line,
    )
    if isinstance(source, Unreadable):
        return cited.model_copy(update={"state": "refused", "reason": str(source)})
    if isinstance(source, Exception):
        return cited.model_copy(update={"reason": str(source)})
    verdict = check_quote(
        source.path, citation.start_line, citation.end_line, citation.quote, source.text
    )
    if verdict.state in ("verified", "moved"):
        where = {"start_line": verdict.start_line, "end_line": verdict.end_line}
        return cited.model_copy(update={"state": verdict.state, **where})
    found = _nearest(verdict)
    return cited.model_copy(
        update={"state": verdict.state, "nearest": found, "reason": _why(verdict)}
    )


def _nearest(verdict: Verdict) -> NearestOut | None:
    found = verdict.nearest
    if found is None:
        return None
    return NearestOut(
        start_line=found.start_line,
        end_line=found.end_line,
        text=found.text,
        similarity=found.similarity,
    )


def _why(verdict: Verdict) -> str:
    problem = verdict.problem
    if problem is not None and problem != "quote_not_held":  # in the file, but not a quote
        return f"{PROBLEMS[problem]}; nearest holds the most similar lines"
    if verdict.state == "stale":
        return "the quote is not in the file as given; nearest holds the lines as they are now"
    if verdict.nearest is None:
        return "the quote is not in the file, and no line of it shares a word with the quote"
    return "the quote is not in the file; nearest holds the most similar lines"


def open_citation(
    root: Path, config: Config, citation: OpenIn, context: int, cancel: threading.Event
) -> OpenOutput:
    try:
        source = Privacy.for_root(root, config).read(citation.path)
    except (Unreadable, Missing) as exc:
        raise ToolRefusal(str(exc)) from None
    lines = split_lines(source.text)
    start, end, reason = citation.start_line, citation.end_line, None
    state: OpenState = "unchecked"
    if citation.quote is not None and citation.quote.strip():
        verdict = check_quote(source.path, start, end, citation.quote, source.text)
        state = verdict.state
        if verdict.state in ("verified", "moved"):
            start, end = verdict.start_line, verdict.end_line
        else:
            reason = _why(verdict)
            if verdict.nearest is not None:
                start, end = verdict.nearest.start_line, verdict.nearest.end_line
    if start > len(lines):
        raise ToolRefusal(f"{source.path} has {len(lines)} lines; line {start} does not exist")
    end = min(end, len(lines))
    return OpenOutput(
        path=source.path,
        state=state,
        start_line=start,
        end_line=end,
        excerpt=excerpt(lines, start, end, context),
        reason=reason,
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
