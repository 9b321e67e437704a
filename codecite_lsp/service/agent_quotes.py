"""An agent's citations (path, lines, quote; no content hash) judged against the files as they
are now, read through the privacy rules (:meth:`.privacy.Privacy.read`) and judged by the quote
rule (:mod:`codecite_lsp.verify.agent_quotes`). Neither needs the index: they also work while a
first index pass is still running.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..core.config import Config
from ..ingest.scan import SourceFile
from ..verify.agent_quotes import Nearest, State, check_quote, reason
from ..verify.quotes import split_lines
from .errors import check
from .privacy import Missing, Privacy, Unreadable


@dataclass(frozen=True)
class Quoted:
    """What an agent cites: a file's lines and, optionally (open_citation), the quoted code."""

    path: str
    start_line: int
    end_line: int
    quote: str | None = None


@dataclass(frozen=True)
class Judged:
    """One citation's verdict; ``start_line``/``end_line`` where the quote is now (verified and
    moved only)."""

    state: State | Literal["refused"]
    start_line: int | None = None
    end_line: int | None = None
    nearest: Nearest | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Opened:
    """A cited file's current lines, and the range to show as cited (resolved, or nearest)."""

    path: str
    lines: list[str]
    state: State | Literal["unchecked"]
    start_line: int
    end_line: int
    reason: str | None = None


def judge(
    root: Path, config: Config, citations: Sequence[Quoted], cancel: threading.Event
) -> list[Judged]:
    """Each citation's verdict, in order; a private file is refused, never read."""
    privacy = Privacy.for_root(root, config)

    @functools.cache  # several quotes from one file: read it once
    def read(path: str) -> SourceFile | Exception:
        try:
            return privacy.read(path)
        except (Unreadable, Missing) as exc:
            return exc

    judged = []
    for citation in citations:
        check(cancel)
        judged.append(_judge(citation, read(citation.path)))
    return judged


def _judge(citation: Quoted, source: SourceFile | Exception) -> Judged:
    if isinstance(source, Unreadable):
        return Judged("refused", reason=str(source))
    if isinstance(source, Exception):
        return Judged("not_found", reason=str(source))
    verdict = check_quote(
        source.path, citation.start_line, citation.end_line, citation.quote or "", source.text
    )
    if verdict.state in ("verified", "moved"):
        return Judged(verdict.state, verdict.start_line, verdict.end_line)
    return Judged(verdict.state, nearest=verdict.nearest, reason=reason(verdict))


def open_quoted(root: Path, config: Config, citation: Quoted) -> Opened:
    """The cited file's lines, the cited range re-located by its quote when one is given;
    Unreadable or Missing for a file an agent may not read."""
    source = Privacy.for_root(root, config).read(citation.path)
    start, end = citation.start_line, citation.end_line
    lines = split_lines(source.text)
    if citation.quote is None or not citation.quote.strip():
        return Opened(source.path, lines, "unchecked", start, end)
    verdict = check_quote(source.path, start, end, citation.quote, source.text)
    if verdict.state in ("verified", "moved"):
        return Opened(source.path, lines, verdict.state, verdict.start_line, verdict.end_line)
    if verdict.nearest is not None:
        start, end = verdict.nearest.start_line, verdict.nearest.end_line
    return Opened(source.path, lines, verdict.state, start, end, reason(verdict))
