"""The citation gate (pure): nothing reaches the user unless every citation checks out verbatim.

Decisions, stated once:
- The only leniency is whitespace normalisation (runs of whitespace, newlines included, become one
  space; ends stripped). No fuzzy matching; case matters.
- A citation passes when its label is one of this request's sources, its quote is non-empty, its
  lines lie inside that source's range, and the normalised text of exactly those lines contains
  the normalised quote.
- An answer with no claim at all (prose only, or no spans) is a dodge, not an answer: it fails as
  ``unverified_citation`` ("the answer makes no cited claim"), so it is retried, then refused.
- A non-null ``refuse`` means the model refused; any spans next to it are ignored.
- Anything that is not the reply shape (not JSON, wrong types, extra keys, empty claim text) is a
  ``model_error``. ``verify`` never raises on bad model output.
- Indexes in checks are 0-based; the human-readable details count from 1.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..core.answers import Citation, ClaimSpan, ProseSpan
from .citations import declared_lines, lines_hash, normalise_ws, quote_hash, quote_ranges
from .prompt import Source

Why = Literal[
    "unknown_label",
    "empty_quote",
    "bad_line_range",
    "lines_outside_source",
    "quote_has_line_numbers",
    "quote_not_found",
    "lines_do_not_hold_quote",
    "no_citation",
    "no_claim",
    "malformed_reply",
]


@dataclass(frozen=True)
class CitationCheck:
    """Outcome of one citation, or of a claim/answer rule (then citation_index is None)."""

    span_index: int | None
    citation_index: int | None
    label: str | None
    start_line: int | None
    end_line: int | None
    ok: bool
    why: Why | None = None
    detail: str = ""

    @property
    def where(self) -> str:
        parts = []
        if self.span_index is not None:
            parts.append(f"span {self.span_index + 1}")
        if self.citation_index is not None:
            parts.append(f"citation {self.citation_index + 1}")
        place = ", ".join(parts)
        if self.label is not None:
            place += f" ({self.label}, lines {self.start_line}-{self.end_line})"
        return place

    def describe(self) -> str:
        if self.span_index is None:  # an answer-level problem: the detail says it all
            return self.detail
        return f"{self.where}: {self.detail}"


CitationFailure = CitationCheck  # a failure is a check with ok=False; one type keeps traces simple


@dataclass(frozen=True)
class GatePassed:
    spans: list[ProseSpan | ClaimSpan]
    checks: list[CitationCheck]
    status: Literal["passed"] = "passed"


@dataclass(frozen=True)
class GateRefusedByModel:
    reason: Literal["no_span_in_retrieval"]
    checks: list[CitationCheck] = field(default_factory=list)
    status: Literal["refused_by_model"] = "refused_by_model"


@dataclass(frozen=True)
class GateFailed:
    kind: Literal["unverified_citation", "model_error"]
    failures: list[CitationFailure]
    detail: str
    checks: list[CitationCheck]
    status: Literal["failed"] = "failed"


GateResult = GatePassed | GateRefusedByModel | GateFailed


# ---------------------------------------------------------------------------------------------
# The reply shape (docs/contracts.md "What the model is asked to return"), validated strictly.


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _ReplyCitation(_Strict):
    source: str
    start_line: int
    end_line: int
    quote: str


class _ReplyProse(_Strict):
    kind: Literal["prose"]
    text: str


class _ReplyClaim(_Strict):
    kind: Literal["claim"]
    text: str
    citations: list[_ReplyCitation]  # an empty list is a citation failure, not a shape error

    @field_validator("text")
    @classmethod
    def _says_something(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("claim text is empty")
        return text


class _ReplyRefusal(_Strict):
    reason: Literal["no_span_in_retrieval"]


class _Reply(_Strict):
    spans: list[Annotated[_ReplyProse | _ReplyClaim, Field(discriminator="kind")]]
    refuse: _ReplyRefusal | None = None


_FENCED = re.compile(r"^```[A-Za-z]*[ \t]*\n(.*?)\n?```$", re.DOTALL)
_LINE_PREFIX = re.compile(r"(?:^|\n)\s*\d+ \| ")
_EOL = re.compile(r"(\r\n|\r|\n)")


def _parse(raw: str | dict[str, Any]) -> _Reply | str:
    """The validated reply, or a plain-words reason why it is malformed."""
    data: Any = raw
    if isinstance(raw, str):
        text = raw.strip()
        fenced = _FENCED.match(text)
        if fenced:
            text = fenced.group(1).strip()
        try:
            data = json.loads(text)
        except ValueError as exc:
            return f"the reply is not JSON ({exc})"
    if not isinstance(data, dict):
        return f"the reply is a JSON {type(data).__name__}, not an object with 'spans'"
    try:
        return _Reply.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(part) for part in first["loc"]) or "reply"
        more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
        return f"the reply has the wrong shape at {location}: {first['msg']}{more}"


# ---------------------------------------------------------------------------------------------
# Sources prepared once per request


@dataclass
class _Prepared:
    source: Source
    lines: list[str]
    normalised: str
    _byte_spans: list[tuple[int, int]] | None = None

    def byte_span(self, start_line: int, end_line: int) -> tuple[int, int]:
        """File byte offsets of the cited lines: start of the first, end of the last's content."""
        if self._byte_spans is None:
            spans, offset = [], self.source.start_byte
            pieces = _EOL.split(self.source.text)
            for index in range(0, len(pieces), 2):
                size = len(pieces[index].encode("utf-8"))
                spans.append((offset, offset + size))
                ending = pieces[index + 1] if index + 1 < len(pieces) else ""
                offset += size + len(ending)
            end = spans[-1][1]
            # Lines the text lacks (a declared empty last line) sit at its end.
            spans += [(end, end)] * (len(self.lines) - len(spans))
            self._byte_spans = spans
        first = start_line - self.source.start_line
        last = end_line - self.source.start_line
        return self._byte_spans[first][0], self._byte_spans[last][1]


def _prepare(sources: list[Source]) -> dict[str, _Prepared]:
    prepared = {}
    for source in sources:
        lines = declared_lines(source.text, source.end_line - source.start_line + 1)
        prepared[source.label] = _Prepared(source, lines, normalise_ws("\n".join(lines)))
    return prepared


def _check(
    span_index: int, citation_index: int, cite: _ReplyCitation, prepared: dict[str, _Prepared]
) -> CitationCheck:
    """Check one citation: its source label was given, its lines lie inside that source, and its
    quote, whitespace-normalised, occurs in the source and within exactly the cited lines."""
    label, start, end = cite.source, cite.start_line, cite.end_line

    def result(why: Why | None, detail: str = "") -> CitationCheck:
        return CitationCheck(
            span_index, citation_index, label, start, end, why is None, why, detail or "verified"
        )

    entry = prepared.get(label)
    if entry is None:
        given = ", ".join(prepared) or "none"
        return result("unknown_label", f"{label!r} is not a given source (given: {given})")
    needle = normalise_ws(cite.quote)
    if not needle:
        return result("empty_quote", "the quote is empty")
    if start > end:
        return result("bad_line_range", f"start_line {start} is after end_line {end}")
    src = entry.source
    first_line = src.start_line
    if start < first_line or end > src.end_line:
        return result(
            "lines_outside_source",
            f"lines {start}-{end} are outside {label} ({src.path}:{first_line}-{src.end_line})",
        )
    if needle not in entry.normalised:
        if _LINE_PREFIX.search(cite.quote):
            return result(
                "quote_has_line_numbers",
                "the quote contains line-number prefixes like '12 | '; they are not in the file",
            )
        return result(
            "quote_not_found", f"the quote does not occur verbatim in {label} ({src.path})"
        )
    cited = entry.lines[start - first_line : end - first_line + 1]
    if needle not in normalise_ws("\n".join(cited)):
        spots = quote_ranges(entry.lines, cite.quote)
        at = ", ".join(f"{a + first_line - 1}-{b + first_line - 1}" for a, b in spots[:3])
        return result(
            "lines_do_not_hold_quote",
            f"the quote is in {label} but not within lines {start}-{end} (it is at lines {at})",
        )
    return result(None)


def _citation(cite: _ReplyCitation, entry: _Prepared) -> Citation:
    src = entry.source
    first = src.start_line
    cited = entry.lines[cite.start_line - first : cite.end_line - first + 1]
    start_byte, end_byte = entry.byte_span(cite.start_line, cite.end_line)
    return Citation(
        path=src.path,
        start_line=cite.start_line,
        end_line=cite.end_line,
        quote=cite.quote.strip(),
        content_hash=lines_hash(cited),
        revision=src.revision,
        start_byte=start_byte,
        end_byte=end_byte,
        quote_hash=quote_hash(cite.quote),
        chunk_hash=src.content_hash,
    )


def _failed(
    kind: Literal["unverified_citation", "model_error"],
    failures: list[CitationCheck],
    checks: list[CitationCheck],
) -> GateFailed:
    detail = "; ".join(failure.describe() for failure in failures)
    return GateFailed(kind=kind, failures=failures, detail=detail, checks=checks)


def verify(raw: str | dict[str, Any], sources: list[Source]) -> GateResult:
    """Check a model reply against this request's sources; never raises on bad model output."""
    reply = _parse(raw)
    if isinstance(reply, str):
        problem = CitationCheck(None, None, None, None, None, False, "malformed_reply", reply)
        return _failed("model_error", [problem], [])
    if reply.refuse is not None:
        return GateRefusedByModel(reason=reply.refuse.reason)

    prepared = _prepare(sources)
    checks: list[CitationCheck] = []
    failures: list[CitationCheck] = []
    claims = 0
    for span_index, span in enumerate(reply.spans):
        if isinstance(span, _ReplyProse):
            continue
        claims += 1
        if not span.citations:
            failures.append(
                CitationCheck(span_index, None, None, None, None, False, "no_citation", "uncited")
            )
            continue
        for citation_index, cite in enumerate(span.citations):
            check = _check(span_index, citation_index, cite, prepared)
            checks.append(check)
            if not check.ok:
                failures.append(check)
    if claims == 0:
        failures.append(
            CitationCheck(
                None, None, None, None, None, False, "no_claim", "the answer makes no cited claim"
            )
        )
    if failures:
        return _failed("unverified_citation", failures, checks)

    spans: list[ProseSpan | ClaimSpan] = [
        ProseSpan(text=span.text)
        if isinstance(span, _ReplyProse)
        else ClaimSpan(
            text=span.text,
            citations=[_citation(cite, prepared[cite.source]) for cite in span.citations],
        )
        for span in reply.spans
    ]
    return GatePassed(spans=spans, checks=checks)


def feedback_for(failures: list[CitationFailure]) -> str:
    """The stricter retry instruction: each failed citation, where it is and why it failed."""
    listed = "\n".join(f"- {failure.describe()}" for failure in failures)
    return (
        "Your previous reply was rejected; these parts failed verification:\n"
        f"{listed}\n"
        "Reply again, strictly: every claim needs at least one citation; copy each quote character "
        "for character from the cited lines, without the line-number prefixes; keep start_line and "
        "end_line on the lines that hold the quote; use only the source labels given above. If the "
        'sources do not hold the answer, reply {"spans": [], "refuse": {"reason": '
        '"no_span_in_retrieval"}}.'
    )
