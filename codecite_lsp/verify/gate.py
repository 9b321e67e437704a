"""The citation gate (pure): nothing reaches the user unless every statement checks out.

Decisions, stated once:
- The only leniency in a quote is whitespace normalisation (runs of whitespace, newlines included,
  become one space; ends stripped). No fuzzy matching; case matters.
- A citation passes when its label is one of this request's sources, its lines lie inside that
  source's range, and the quote holds on exactly those lines by the one quote rule (quotes.py,
  shared with citation resolution and MCP): the normalised text of those lines contains the
  normalised quote, starting and ending on token boundaries ("lue = opts.ge" does not), and the
  quote has substance: an identifier of 3+ characters that is not a keyword, or 8+ non-space
  characters, or whole cited lines ("e" verifies nothing).
- A claim says only what its evidence shows (support.py): its names, numbers, literals, options,
  paths, negations and quantifiers appear in its quotes or cited lines, and a range much wider
  than its quote is cut to the quote's lines and 4 either side first.
- A source holding text addressed to an AI reader (ingest/injection.py) is untrusted: no claim
  rests on it alone, and its citations are left out of the claims that also cite clean sources.
  Whatever the scan found, an instruction is no evidence for what it tells its reader to say: a
  citation whose quote follows "tell the user that", "say", "answer that" (in any language the
  scan knows) in its sentence supports nothing, and a claim with no other support is removed.
- Prose carries no facts (prose.py): prose beyond framing words is an uncited claim. A gap
  ("the sources do not show X") is shown as such and is no claim; it names only what the
  question or the sources name and asserts nothing.
- An answer with no claim at all (prose only, or no spans) is a dodge, not an answer: it fails as
  ``unverified_citation`` ("the answer makes no cited claim"), so it is retried, then refused.
- A model refusal (a ``refuse`` that says something) is a refusal; any spans next to it are
  ignored. An empty one (``{"reason": null}``) beside spans is a placeholder: the answer wins.
- The envelope is tolerant, the content strict (envelope.py): a reply that is not the reply shape is
  a ``model_error``. ``verify`` never raises on bad model output.
- ``verify`` is all or nothing (the stable api.gate contract); a failed result also carries the
  spans that did verify, so the answering pipeline can drop the rest after its retry.
- Indexes in checks are 0-based; the human-readable details count from 1.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..core import wording
from ..core.answers import Citation, ClaimSpan, GapSpan, ProseSpan
from ..core.records import Result, Source
from ..ingest.injection import instructed, kinds
from .envelope import Envelope, ReplyCitation, ReplyClaim, ReplyGap, ReplySpan, parse
from .prepared import Prepared, evidence, prepare, reached_citation
from .prose import gap_problem, gap_subject, prose_problem, word_stems
from .quotes import (
    PROBLEMS,
    lines_hash,
    normalise_ws,
    quote_hash,
    quote_problem,
    quote_ranges,
)
from .support import missing, narrowed

Why = Literal[
    "unknown_label",
    "empty_quote",
    "bad_line_range",
    "lines_outside_source",
    "quote_has_line_numbers",
    "quote_not_found",
    "lines_do_not_hold_quote",
    "quote_cuts_token",
    "quote_too_trivial",
    "claim_unsupported",
    "untrusted_source",
    "no_citation",
    "no_claim",
    "prose_states_fact",
    "gap_states_fact",
    "malformed_reply",
]


@dataclass(frozen=True)
class CitationCheck:
    """Outcome of one citation, or of a span/answer rule (then citation_index is None)."""

    span_index: int | None
    citation_index: int | None
    label: str | None
    start_line: int | None
    end_line: int | None
    ok: bool
    why: Why | None = None
    detail: str = ""
    quote: str = ""  # the citation's quote as the model wrote it (retry feedback)
    text: str = ""  # the span's text (retry feedback; never shown to the user when it failed)
    # A claim-level failure: every citation's (label, start, end) the claim rested on (feedback)
    ranges: tuple[tuple[str, int, int], ...] = ()

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
AnswerSpan = ProseSpan | GapSpan | ClaimSpan


@dataclass(frozen=True)
class GatePassed:
    spans: list[AnswerSpan]
    checks: list[CitationCheck]
    envelope: Envelope = "object"
    status: Literal["passed"] = "passed"


@dataclass(frozen=True)
class GateRefusedByModel:
    reason: Literal["no_span_in_retrieval"]
    checks: list[CitationCheck] = field(default_factory=list)
    envelope: Envelope = "object"
    status: Literal["refused_by_model"] = "refused_by_model"


@dataclass(frozen=True)
class GateFailed:
    kind: Literal["unverified_citation", "model_error"]
    failures: list[CitationFailure]
    detail: str
    checks: list[CitationCheck]
    kept: list[AnswerSpan] = field(default_factory=list)  # the spans that did verify
    statements: int = 0  # claims, plus prose and gaps that stated something
    removed: int = 0  # of those, the ones that failed
    envelope: Envelope | None = None  # None: no reply object was found
    status: Literal["failed"] = "failed"

    @property
    def kept_claims(self) -> int:
        return sum(isinstance(span, ClaimSpan) for span in self.kept)


GateResult = GatePassed | GateRefusedByModel | GateFailed

_LINE_PREFIX = re.compile(r"(?:^|\n)\s*\d+ \| ")


def _check(
    span_index: int, citation_index: int, cite: ReplyCitation, prepared: dict[str, Prepared]
) -> CitationCheck:
    """Check one citation: its source label was given, its lines lie inside that source, and its
    quote, whitespace-normalised, occurs within exactly the cited lines, on token boundaries, and
    says something."""
    label, start, end = cite.source, cite.start_line, cite.end_line

    def result(why: Why | None, detail: str = "") -> CitationCheck:
        return CitationCheck(
            span_index,
            citation_index,
            label,
            start,
            end,
            why is None,
            why,
            detail or "verified",
            cite.quote,
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
    src = entry.source.result.chunk
    if start < src.start_line or end > src.end_line:
        return result(
            "lines_outside_source",
            f"lines {start}-{end} are outside {label} ({src.path}:{src.start_line}-{src.end_line})",
        )
    if needle not in entry.normalised:
        if _LINE_PREFIX.search(cite.quote):
            return result(
                "quote_has_line_numbers",
                "the quote contains line-number prefixes like '12 | '; they are not in the file",
            )
        return result(
            "quote_not_found",
            f"the quote does not occur verbatim in {label} ({src.path})",
        )
    problem = quote_problem(cite.quote, entry.cited(start, end))
    if problem == "quote_not_held":
        spots = quote_ranges(entry.lines, cite.quote)
        at = ", ".join(f"{a + src.start_line - 1}-{b + src.start_line - 1}" for a, b in spots[:3])
        return result(
            "lines_do_not_hold_quote",
            f"the quote is in {label} but not within lines {start}-{end}"
            + (f" (it is at lines {at})" if at else ""),
        )
    if problem is not None:
        return result(problem, PROBLEMS[problem])
    return result(None)


def _citation(cite: ReplyCitation, entry: Prepared) -> Citation:
    src = entry.source.result.chunk
    start_byte, end_byte = entry.byte_span(cite.start_line, cite.end_line)
    return Citation(
        path=src.path,
        start_line=cite.start_line,
        end_line=cite.end_line,
        quote=cite.quote.strip(),
        content_hash=lines_hash(entry.cited(cite.start_line, cite.end_line)),
        revision=src.revision,
        start_byte=start_byte,
        end_byte=end_byte,
        quote_hash=quote_hash(cite.quote),
        chunk_hash=src.content_hash,
    )


def _narrowed(cite: ReplyCitation, entry: Prepared) -> ReplyCitation:
    cited = entry.cited(cite.start_line, cite.end_line)
    start, end = narrowed(cited, cite.quote, cite.start_line, cite.end_line)
    return cite.model_copy(update={"start_line": start, "end_line": end})


def _claim_failure(
    index: int, text: str, cites: list[ReplyCitation], why: Why, detail: str
) -> CitationCheck:
    """A claim-level failure, placed at the claim's first citation; the feedback shows the
    lines of every citation it rested on."""
    cite = cites[0]
    place = (cite.source, cite.start_line, cite.end_line)
    ranges = tuple((c.source, c.start_line, c.end_line) for c in cites)
    return CitationCheck(index, None, *place, False, why, detail, cite.quote, text, ranges)


def _supported(
    index: int,
    text: str,
    cites: list[ReplyCitation],
    prepared: dict[str, Prepared],
    question: str,
    wording: bool,
) -> tuple[list[ReplyCitation], CitationCheck | None]:
    """The claim-level support check over all its (narrowed) citations: the citations to show
    (grown to a line next to them that holds a name the claim gives) and None, or the failure."""
    absent = missing(text, evidence(cites, prepared, question), wording)
    if not absent:
        return cites, None
    grown = [reached_citation(cite, prepared[cite.source], absent) for cite in cites]
    if grown != cites and not missing(text, evidence(grown, prepared, question), wording):
        return grown, None
    terms = ", ".join(term if term.startswith("'") else f"'{term}'" for term in absent)
    detail = f"the claim says {terms}, which its quoted lines do not show"
    return cites, _claim_failure(index, text, cites, "claim_unsupported", detail)


def _untrusted(
    index: int, text: str, cites: list[ReplyCitation], prepared: dict[str, Prepared]
) -> CitationCheck:
    entry = prepared[cites[0].source]
    detail = (
        f"{entry.source.label} ({entry.source.result.chunk.path}) holds text addressed to an AI "
        "model "
        f"({', '.join(kinds(entry.flags))}, line {entry.flags[0].line}): it is data, not a "
        "source a claim can rest on alone"
    )
    return _claim_failure(index, text, cites, "untrusted_source", detail)


def _said(result: Result) -> str:
    """What a source says of itself, for the words a gap may name: path, symbols, text."""
    chunk = result.chunk
    symbols = result.symbols_within(chunk.start_line, chunk.end_line)
    return f"{chunk.path} {' '.join(symbols)} {chunk.text}"


def _named(result: Result) -> str:
    """A source's own names (path and symbols): the repository's names prose may announce."""
    chunk = result.chunk
    return f"{chunk.path} {' '.join(result.symbols_within(chunk.start_line, chunk.end_line))}"


def _told(cite: ReplyCitation, entry: Prepared) -> bool:
    """Whether the citation quotes what an instruction on its lines tells the reader to say."""
    cited = normalise_ws(" ".join(entry.cited(cite.start_line, cite.end_line)))
    return instructed(cited, normalise_ws(cite.quote))


def _instruction(
    index: int, text: str, cites: list[ReplyCitation], entry: Prepared
) -> CitationCheck:
    detail = (
        f"{entry.source.label} ({entry.source.result.chunk.path}) line {cites[0].start_line} "
        "tells its reader to say this: an instruction is data, not evidence a claim can rest on"
    )
    return _claim_failure(index, text, cites, "untrusted_source", detail)


def _span_failure(index: int, why: Why, detail: str, text: str) -> CitationCheck:
    return CitationCheck(index, None, None, None, None, False, why, detail, text=text)


@dataclass(frozen=True)
class Judged:
    """One span's verdict: the span to show (None: left out), and its checks and failures."""

    kept: AnswerSpan | None
    checks: list[CitationCheck]
    failures: list[CitationCheck]


class _Stems(Container[str]):
    """The stems of the sources' words, read on the first look-up: prose needs them only for a
    clause the speaker opens ("Let's dig in"), and stemming every source line cost an answer
    3 ms when nothing looked."""

    def __init__(self, texts: Iterable[str]) -> None:
        self._texts: Iterable[str] | None = texts
        self._stems: frozenset[str] = frozenset()

    def __contains__(self, word: object) -> bool:
        if self._texts is not None:
            self._stems, self._texts = word_stems(self._texts), None
        return word in self._stems


class Judge:
    """The gate's rules for one span at a time, over one request's sources and question: the
    whole reply (``verify``) and a reply still arriving (preview.py) are judged by the same
    code. The sources' words are read once, when a span first needs them."""

    def __init__(self, sources: list[Source], question: str = "", wording: bool = True) -> None:
        self.sources = sources
        self.question = question
        self.wording = wording  # False: the model's support check judges the claim's wording
        self.prepared = prepare(sources)
        self.asked = word_stems([question])
        self._known: frozenset[str] | None = None  # the question's and the sources' words
        self._code: _Stems | None = None  # the sources' words, for prose
        self._names: frozenset[str] = frozenset()  # the sources' paths and symbols

    def span(self, index: int, span: ReplySpan, claims: int | None) -> Judged:
        """The verdict on the reply's ``index``th span; ``claims``: the number of the reply's
        claims (a count in prose must match it), None while unknown: prose stating a count then
        raises prose.Undecided."""
        if isinstance(span, ReplyClaim):
            return self._claim(index, span)
        if isinstance(span, ReplyGap):
            if self._known is None:
                said = word_stems(_said(source.result) for source in self.sources)
                self._known = self.asked | said
            problem = gap_problem(span.text, self._known)
            if problem is not None:
                return Judged(
                    None, [], [_span_failure(index, "gap_states_fact", problem, span.text)]
                )
            return Judged(GapSpan(text=wording.GAP.format(what=gap_subject(span.text))), [], [])
        if self._code is None:
            self._code = _Stems([source.result.chunk.text for source in self.sources])
            self._names = word_stems(_named(source.result) for source in self.sources)
        problem = prose_problem(span.text, self.asked, self._code, self._names, claims)
        if problem is not None:
            return Judged(None, [], [_span_failure(index, "prose_states_fact", problem, span.text)])
        return Judged(ProseSpan(text=span.text) if span.text.strip() else None, [], [])

    def _claim(self, index: int, span: ReplyClaim) -> Judged:
        prepared = self.prepared
        if not span.citations:
            return Judged(None, [], [_span_failure(index, "no_citation", "uncited", span.text)])
        own = [_check(index, number, cite, prepared) for number, cite in enumerate(span.citations)]
        bad = [check for check in own if not check.ok]
        if bad:
            return Judged(None, own, [replace(check, text=span.text) for check in bad])
        narrow = [_narrowed(cite, prepared[cite.source]) for cite in span.citations]
        clean = [cite for cite in narrow if not prepared[cite.source].flags]
        trusted = [cite for cite in clean if not _told(cite, prepared[cite.source])]
        if trusted:
            trusted, unsupported = _supported(
                index, span.text, trusted, prepared, self.question, self.wording
            )
        elif clean:
            unsupported = _instruction(index, span.text, clean, prepared[clean[0].source])
        else:
            unsupported = _untrusted(index, span.text, narrow, prepared)
        if unsupported is not None:
            return Judged(None, [*own, unsupported], [unsupported])
        citations = [_citation(cite, prepared[cite.source]) for cite in trusted]
        return Judged(ClaimSpan(text=span.text, citations=citations), own, [])


def verify(
    raw: str | dict[str, Any], sources: list[Source], question: str = "", wording: bool = True
) -> GateResult:
    """Check a model reply against this request's sources; never raises on bad model output.
    ``question`` supplies the words an opener may repeat and a gap may name (prose.py);
    ``wording`` False: a claim's counts in words, quantifiers and negations are left to the
    model's support check, which runs after the gate (support.py, ``missing``)."""
    parsed = parse(raw)
    if isinstance(parsed, str):
        malformed = CitationCheck(None, None, None, None, None, False, "malformed_reply", parsed)
        return GateFailed("model_error", [malformed], parsed, [])
    reply, envelope = parsed.reply, parsed.envelope
    if reply.refused:
        return GateRefusedByModel(reason="no_span_in_retrieval", envelope=envelope)

    judge = Judge(sources, question, wording)
    checks: list[CitationCheck] = []
    failures: list[CitationCheck] = []
    kept: list[AnswerSpan] = []
    statements = removed = 0
    claims = sum(isinstance(span, ReplyClaim) for span in reply.spans)  # a count in prose
    for index, span in enumerate(reply.spans):
        judged = judge.span(index, span, claims)
        checks.extend(judged.checks)
        failures.extend(judged.failures)
        if judged.kept is not None:
            kept.append(judged.kept)
        # Every claim is a statement; prose and gaps are when they stated something.
        statements += isinstance(span, ReplyClaim) or bool(judged.failures)
        removed += bool(judged.failures)
    if claims == 0:
        failures.append(
            CitationCheck(
                None, None, None, None, None, False, "no_claim", "the answer makes no cited claim"
            )
        )
    if failures:
        detail = "; ".join(failure.describe() for failure in failures)
        return GateFailed(
            "unverified_citation", failures, detail, checks, kept, statements, removed, envelope
        )
    return GatePassed(spans=kept, checks=checks, envelope=envelope)
