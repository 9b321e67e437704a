"""Replay recorded model replies through the answering path and count what the user would see
(``codecite eval``; a release gate in CI).

A corpus holds prompts (a question and the sources retrieval chose, snapshotted so the corpus
runs without the repository) and cases: the replies a model sent, one per call, and the outcome
a correct gate gives. Each case goes through the same prompt, gate, conversational retry and
per-claim dropping as ``codecite ask`` (attempts.converse), with the replies in place of litellm.

"Unverified statements shown" is counted independently of the gate: a shown span whose text the
case lists as unverified, or a shown citation whose quote is not, after whitespace
normalisation, within the cited lines of the snapshotted source.

A corpus is validated whole before any case runs (``parse_corpus``): a file that is not one is
a ``CorpusError`` naming what is wrong in it, never a traceback, and never taken for a gate that
failed.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..core.answers import ClaimSpan, ProseSpan
from ..core.files import TooLarge, read_regular
from ..core.records import Chunk, Source, outside_source
from .attempts import Messages, ModelText, Verdict, converse
from .prompt import build_messages

MAX_VALID_REFUSED = 0.02  # the target: at most 2% of valid replies refused
MAX_CORPUS_BYTES = 64 * 1024 * 1024  # the corpus in the repository is 0.3 MB
_TOO_LARGE = f"larger than {MAX_CORPUS_BYTES // 1_048_576} MB: not a replay corpus"
_ERRORS_SHOWN = 3


class CorpusError(ValueError):
    """The file is not a replay corpus; the message says what is wrong in it."""


class SnapshotSource(BaseModel):
    """A source as snapshots store it (``core.records.source_fields``)."""

    model_config = ConfigDict(extra="ignore")

    label: str
    path: str
    start_line: int
    end_line: int
    text: str
    symbol: str | None = None
    content_hash: str = ""
    revision: str = ""
    start_byte: int = 0

    def source(self) -> Source:
        return outside_source(**self.model_dump())


class Prompt(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question: str
    sources: list[SnapshotSource]


class Expected(BaseModel):
    """The outcome a correct gate gives, in the shape of ``CaseOutcome.actual``."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["answered", "refused"]
    model_calls: int
    claims: int | None = None
    prose: int | None = None
    removed: int | None = None
    reason: str | None = None


class Case(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    prompt: str
    style: str
    replies: list[str] = Field(min_length=1)
    expect: Expected
    unverified: list[str] = []


class Corpus(BaseModel):
    model_config = ConfigDict(extra="ignore")

    prompts: dict[str, Prompt]
    cases: list[Case]

    @model_validator(mode="after")
    def _prompts_exist(self) -> Corpus:
        for case in self.cases:
            if case.prompt not in self.prompts:
                raise ValueError(f"case {case.id!r} names a prompt not in prompts: {case.prompt!r}")
        return self


# What a path is when it is no file: a FIFO's open waits for a writer forever, a device such as
# /dev/zero never ends; neither is read.
_NOT_FILES = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_corpus(path: Path) -> Corpus:
    """The corpus in the regular file at ``path`` (read bounded, never waited on), or
    CorpusError saying what is wrong; OSError when it cannot be read at all."""
    try:
        data, _ = read_regular(path, MAX_CORPUS_BYTES)
    except TooLarge:
        raise CorpusError(_TOO_LARGE) from None
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path)) from None
        kind = next((kind for test, kind in _NOT_FILES if test(mode)), "not a regular file")
        raise CorpusError(f"{kind}, not a file: not a replay corpus") from None
    return parse_corpus(data)


def parse_corpus(data: bytes) -> Corpus:
    """The corpus in ``data`` (a JSON document), or CorpusError saying what is wrong."""
    if len(data) > MAX_CORPUS_BYTES:
        raise CorpusError(_TOO_LARGE)
    try:
        raw = json.loads(data)
    except RecursionError:
        raise CorpusError("not a replay corpus: its JSON is nested too deeply") from None
    except ValueError as exc:  # UnicodeDecodeError included
        raise CorpusError(f"not JSON ({exc})") from None
    try:
        return Corpus.model_validate(raw)
    except ValidationError as exc:
        problems = [_problem(error) for error in exc.errors()]
        more = len(problems) - _ERRORS_SHOWN
        shown = "; ".join(problems[:_ERRORS_SHOWN]) + (f" (and {more} more)" if more > 0 else "")
        raise CorpusError(f"not a replay corpus: {shown}") from None
    except RecursionError:
        raise CorpusError("not a replay corpus: it is nested too deeply") from None


def _problem(error: Any) -> str:
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"])
    where = where.lstrip(".") or "the corpus"
    if error["type"] == "missing":
        return f"{where} is missing"
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message[:1].lower()}{message[1:]}"


@dataclass(frozen=True)
class CaseOutcome:
    id: str
    style: str
    verdict: Verdict
    expected: Expected
    unverified_shown: list[str]
    model_calls: int

    @property
    def actual(self) -> dict[str, Any]:
        got: dict[str, Any] = {"status": self.verdict.status, "model_calls": self.model_calls}
        if self.verdict.status == "answered":
            got["claims"] = sum(isinstance(s, ClaimSpan) for s in self.verdict.spans)
            got["prose"] = sum(isinstance(s, ProseSpan) for s in self.verdict.spans)
            got["removed"] = self.verdict.removed
        else:
            got["reason"] = self.verdict.reason
        return got

    @property
    def as_expected(self) -> bool:
        return self.actual == self.expected.model_dump(exclude_none=True)

    @property
    def retried_for_prose(self) -> bool:
        """Asked again although the first reply's claims all verified and only prose or a gap
        failed its rule (such spans are left out instead: the target is none)."""
        first = self.verdict.attempts[0] if self.verdict.attempts else {}
        failed = first.get("rules_failed") or []
        return (
            self.model_calls > 1
            and first.get("gate") == "failed"
            and all(check["ok"] for check in first.get("checks", []))
            and bool(failed)
            and set(failed) <= {"prose_states_fact", "gap_states_fact"}
        )

    @property
    def valid_first_reply(self) -> bool:
        """The first reply was right as sent (expected answered in one call, nothing removed)."""
        return self.expected.model_calls == 1 and self.expected.removed == 0


@dataclass
class Report:
    outcomes: list[CaseOutcome] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        answered = [o for o in self.outcomes if o.verdict.status == "answered"]
        refused = Counter(str(o.verdict.reason) for o in self.outcomes if o not in answered)
        valid = [o for o in self.outcomes if o.valid_first_reply]
        valid_refused = [o for o in valid if o.verdict.status != "answered" or o.verdict.removed]
        first_try = [o for o in valid if o.model_calls == 1 and o.verdict.status == "answered"]
        return {
            "cases": len(self.outcomes),
            "answered": len(answered),
            "refused": sum(refused.values()),
            "refused_by_reason": dict(sorted(refused.items())),
            "claims_shown": sum(o.actual.get("claims", 0) for o in answered),
            "claims_dropped": sum(o.verdict.removed for o in answered),
            "unverified_statements_shown": sum(len(o.unverified_shown) for o in self.outcomes),
            "valid_replies": len(valid),
            "valid_replies_refused": len(valid_refused),
            "envelopes_parsed_first_try": len(first_try),
            "retries_only_for_prose": sum(o.retried_for_prose for o in self.outcomes),
            "as_expected": sum(o.as_expected for o in self.outcomes),
            "not_as_expected": [o.id for o in self.outcomes if not o.as_expected],
        }

    @property
    def passed(self) -> bool:
        figures = self.summary()
        valid = figures["valid_replies"] or 1
        return (
            figures["unverified_statements_shown"] == 0
            and not figures["not_as_expected"]
            and figures["valid_replies_refused"] / valid <= MAX_VALID_REFUSED
        )


def _norm(text: str) -> str:
    # Deliberately not citations.normalise_ws: the recount must not share the gate's code.
    return re.sub(r"\s+", " ", text).strip()


def _unverified(verdict: Verdict, sources: list[Source], listed: list[str]) -> list[str]:
    shown = []
    by_path: dict[str, list[Chunk]] = {}
    for source in sources:
        by_path.setdefault(source.result.chunk.path, []).append(source.result.chunk)
    for span in verdict.spans:
        if span.text in listed:
            shown.append(span.text)
        if not isinstance(span, ClaimSpan):
            continue
        for citation in span.citations:
            held = [
                "\n".join(
                    chunk.text.split("\n")[
                        citation.start_line - chunk.start_line : citation.end_line
                        - chunk.start_line
                        + 1
                    ]
                )
                for chunk in by_path.get(citation.path, [])
                if chunk.start_line <= citation.start_line <= citation.end_line <= chunk.end_line
            ]
            if not any(_norm(citation.quote) in _norm(text) for text in held):
                shown.append(f"{citation.path}:{citation.start_line}: {citation.quote}")
    return shown


def run_case(case: Case, prompts: dict[str, Prompt]) -> CaseOutcome:
    prompt = prompts[case.prompt]
    sources = [snapshot.source() for snapshot in prompt.sources]
    replies = case.replies
    calls = 0

    def ask(_messages: Messages) -> ModelText:
        nonlocal calls
        calls += 1
        return ModelText(replies[min(calls, len(replies)) - 1], "replay")

    question = prompt.question
    verdict = converse(build_messages(question, sources), sources, ask, question=question)
    shown = _unverified(verdict, sources, case.unverified)
    return CaseOutcome(case.id, case.style, verdict, case.expect, shown, calls)


def run(corpus: Corpus) -> Report:
    return Report([run_case(case, corpus.prompts) for case in corpus.cases])


def report_lines(report: Report, name: str) -> list[str]:
    figures = report.summary()
    reasons = ", ".join(f"{k} {v}" for k, v in figures["refused_by_reason"].items()) or "none"
    valid = figures["valid_replies"]
    rate = 100.0 * figures["valid_replies_refused"] / valid if valid else 0.0
    lines = [
        f"replay corpus: {figures['cases']} cases ({name})",
        f"answered: {figures['answered']} (claims shown {figures['claims_shown']}, "
        f"claims dropped {figures['claims_dropped']})",
        f"refused: {figures['refused']} ({reasons})",
        f"unverified statements shown: {figures['unverified_statements_shown']}",
        f"valid replies refused: {figures['valid_replies_refused']} of {valid} ({rate:.1f}%)",
        f"envelopes parsed on the first try: {figures['envelopes_parsed_first_try']} of {valid}",
        f"retries only for prose or a gap: {figures['retries_only_for_prose']}",
        f"outcomes as expected: {figures['as_expected']} of {figures['cases']}",
    ]
    for outcome in report.outcomes:
        if not outcome.as_expected:
            expected = outcome.expected.model_dump(exclude_none=True)
            lines.append(f"  {outcome.id}: expected {expected}, got {outcome.actual}")
        for text in outcome.unverified_shown:
            lines.append(f"  {outcome.id}: SHOWN UNVERIFIED {text!r}")
    lines.append("PASS" if report.passed else "FAIL")
    return lines
