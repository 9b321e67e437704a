"""Replay recorded model replies through the answering path and count what the user would see
(``codecite eval``; a release gate in CI).

A corpus holds prompts (a question and the sources retrieval chose, snapshotted so the corpus
runs without the repository) and cases: the replies a model sent, one per call, and the outcome
a correct gate gives. Each case goes through the same prompt, gate, conversational retry and
per-claim dropping as ``codecite ask`` (attempts.converse), with the replies in place of litellm.

"Unverified statements shown" is counted independently of the gate: a shown span whose text the
case lists as unverified, or a shown citation whose quote is not, after whitespace
normalisation, within the cited lines of the snapshotted source.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..core.answers import ClaimSpan, ProseSpan
from ..core.records import Source
from .attempts import Messages, ModelText, Verdict, converse
from .prompt import build_messages

MAX_VALID_REFUSED = 0.02  # the target: at most 2% of valid replies refused


@dataclass(frozen=True)
class CaseOutcome:
    id: str
    style: str
    verdict: Verdict
    expected: dict[str, Any]
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
        return self.actual == self.expected

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
        return self.expected.get("model_calls") == 1 and self.expected.get("removed") == 0


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
    by_path: dict[str, list[Source]] = {}
    for source in sources:
        by_path.setdefault(source.path, []).append(source)
    for span in verdict.spans:
        if span.text in listed:
            shown.append(span.text)
        if not isinstance(span, ClaimSpan):
            continue
        for citation in span.citations:
            held = [
                "\n".join(
                    source.text.split("\n")[
                        citation.start_line - source.start_line : citation.end_line
                        - source.start_line
                        + 1
                    ]
                )
                for source in by_path.get(citation.path, [])
                if source.start_line <= citation.start_line <= citation.end_line <= source.end_line
            ]
            if not any(_norm(citation.quote) in _norm(text) for text in held):
                shown.append(f"{citation.path}:{citation.start_line}: {citation.quote}")
    return shown


def run_case(case: dict[str, Any], prompts: dict[str, Any]) -> CaseOutcome:
    prompt = prompts[case["prompt"]]
    sources = [Source(**source) for source in prompt["sources"]]
    replies: list[str] = list(case["replies"])
    calls = 0

    def ask(_messages: Messages) -> ModelText:
        nonlocal calls
        calls += 1
        return ModelText(replies[min(calls, len(replies)) - 1], "replay")

    question = prompt["question"]
    verdict = converse(build_messages(question, sources), sources, ask, question=question)
    shown = _unverified(verdict, sources, case.get("unverified", []))
    return CaseOutcome(case["id"], case["style"], verdict, case["expect"], shown, calls)


def run(corpus: dict[str, Any]) -> Report:
    return Report([run_case(case, corpus["prompts"]) for case in corpus["cases"]])


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
            lines.append(f"  {outcome.id}: expected {outcome.expected}, got {outcome.actual}")
        for text in outcome.unverified_shown:
            lines.append(f"  {outcome.id}: SHOWN UNVERIFIED {text!r}")
    lines.append("PASS" if report.passed else "FAIL")
    return lines
