"""The answer, its retry as a conversation, and failing closed per claim (pure but for ``ask``).

1. The model answers; the gate checks the reply. When every claim verifies and only prose or a
   gap fails its rule, those spans are left out and the rest is answered at once: they are not
   claims, so no retry (the whole prompt again) and no "could not be verified" note for them.
2. A reply that fails goes back to the model as its own turn, followed by what failed in it (the
   quote, the real lines, the nearest verbatim text), once.
3. If the retry fails too, the claims that still do not verify are dropped (their text is never
   shown) and the verified ones are answered with a note saying how many statements were
   removed; when none survives, or most were removed, the answer is refused.
4. With the model's support check (``check``), a first reply that passed the gate but lost claims
   to the check goes back the same way, with those claims and their lines; the retry replaces
   it only when more of its checked claims hold.

``ask`` is the only effect: the answering pipeline passes a litellm call, ``codecite eval`` a
scripted list of replies, so both judge replies with the same code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..core import wording
from ..core.answers import RefusalReason
from ..core.records import Source
from ..verify.feedback import retry_feedback, user_detail
from ..verify.gate import AnswerSpan, CitationCheck, GateFailed, GatePassed, GateResult, verify
from .llm import ModelError
from .prompt import retry_messages
from .support_check import Checked, feedback

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class ModelText:
    text: str
    mode: str  # how the reply was asked for: json_schema, tool_call, prompt, offline, replay


Ask = Callable[[Messages], ModelText]
Check = Callable[[list[AnswerSpan]], Checked]  # the model's support check of shown spans


@dataclass
class Verdict:
    status: Literal["answered", "refused"]
    spans: list[AnswerSpan] = field(default_factory=list)
    removed: int = 0  # statements that could not be verified and were left out
    untrusted: list[str] = field(default_factory=list)  # files whose planted text was left out
    reason: RefusalReason | None = None
    detail: str = ""
    attempts: list[dict[str, Any]] = field(default_factory=list)  # one trace record each
    requests: list[Messages] = field(default_factory=list)  # what the model was sent, in order
    checked: Checked | None = None  # the support check's verdict on ``spans``, when it ran

    @property
    def note(self) -> str | None:
        notes = [wording.removed_note(self.removed)] if self.removed else []
        if self.untrusted:
            notes.append(wording.UNTRUSTED.format(paths=", ".join(self.untrusted)))
        return " ".join(notes) or None


def _check_record(check: CitationCheck) -> dict[str, Any]:
    # Never the quote or the span text: the trace holds no source code.
    return {
        "label": check.label,
        "ok": check.ok,
        "why": check.why,
        "known_label": check.why != "unknown_label",
    }


def _record(result: GateResult, mode: str) -> dict[str, Any]:
    failures = result.failures if isinstance(result, GateFailed) else []
    return {
        "gate": result.status,
        "kind": getattr(result, "kind", None),
        "mode": mode,
        "envelope": result.envelope,
        "checks": [_check_record(check) for check in result.checks],
        "rules_failed": [f.why for f in failures if f.citation_index is None],
        "removed": result.removed if isinstance(result, GateFailed) else 0,
    }


_NOT_CLAIMS = frozenset({"prose_states_fact", "gap_states_fact"})


def _only_prose_failed(result: GateFailed) -> bool:
    """Every claim verified (there is one) and only prose or gap spans failed their rule."""
    return (
        result.kind == "unverified_citation"
        and result.kept_claims > 0
        and all(failure.why in _NOT_CLAIMS for failure in result.failures)
    )


def _salvage(failed: list[GateFailed], sources: list[Source], retried: bool) -> Verdict:
    """Fail closed per claim: the verified claims of the best reply, or a refusal."""
    usable = [f for f in failed if f.kind == "unverified_citation"]
    if not usable:
        return Verdict("refused", reason="model_error", detail=wording.MALFORMED_REPLY)
    best = max(reversed(usable), key=lambda f: (f.kept_claims, -f.removed))
    if best.kept_claims and best.removed * 2 <= best.statements:
        paths = {source.label: source.result.chunk.path for source in sources}
        planted = [paths[f.label] for f in best.failures if f.why == "untrusted_source" and f.label]
        untrusted = list(dict.fromkeys(planted))
        return Verdict("answered", spans=best.kept, removed=best.removed, untrusted=untrusted)
    failures = user_detail(best.failures, sources)
    if best.kept_claims:
        detail = wording.MOSTLY_REMOVED.format(
            removed=best.removed, total=best.statements, failures=failures
        )
    elif retried:
        detail = wording.FAILED_AFTER_RETRY.format(failures=failures)
    else:
        detail = wording.FAILED.format(failures=failures)
    return Verdict("refused", reason="unverified_citation", detail=detail)


def converse(
    messages: Messages,
    sources: list[Source],
    ask: Ask,
    *,
    tries: int = 2,
    nothing_found: str = wording.MODEL_FOUND_NOTHING,
    question: str = "",
    wording: bool = True,
    check: Check | None = None,
) -> Verdict:
    """Ask, verify, retry once as a conversation, then answer what verified or refuse.

    ``ask`` may raise ModelError: before any reply that is a refusal; after a failed reply, that
    reply is judged on its own. ``nothing_found`` is the refusal detail when the answerer itself
    declines (worded for a model or for the offline answerer); ``question`` is the one asked
    (the words a gap or an opener may use); ``wording`` False: the model's support check
    judges the claims' wording (verify/gate.py). ``check``: that support check, run on every
    reply the gate passed; when it removed claims and a try is left, the reply goes back with
    them and their lines (a true claim cited short is cited again), and the retry is taken only
    if it keeps more claims."""
    failed: list[GateFailed] = []
    attempts: list[dict[str, Any]] = []
    sent: list[Messages] = []
    best: Verdict | None = None  # a reply the gate passed and the check judged
    for number in range(tries):
        sent.append(messages)
        try:
            reply = ask(messages)
        except ModelError as exc:
            attempts.append({"gate": "not_run", "error": exc.kind})
            if not failed and best is None:
                return Verdict(
                    "refused",
                    reason="model_error",
                    detail=exc.message,
                    attempts=attempts,
                    requests=sent,
                )
            break
        result = verify(reply.text, sources, question, wording)
        attempts.append(_record(result, reply.mode))
        passed = _passed(result)
        if passed is not None:
            answer = Verdict("answered", spans=passed, attempts=attempts, requests=sent)
            if check is None:
                return answer
            answer.checked = check(passed)
            attempts[-1]["support_check"] = answer.checked.record
            if best is None or _keeps_more(answer.checked, best.checked):
                best = answer
            if not (answer.checked.judged and answer.checked.removed) or number == tries - 1:
                break
            messages = retry_messages(messages, reply.text, feedback(answer.checked, sources))
            continue
        if best is not None:  # the retry did worse than the reply already judged
            break
        if not isinstance(result, GateFailed):
            return Verdict(
                "refused",
                reason="no_span_in_retrieval",
                detail=nothing_found,
                attempts=attempts,
                requests=sent,
            )
        failed.append(result)
        messages = retry_messages(messages, reply.text, retry_feedback(result.failures, sources))
    if best is not None:
        best.attempts, best.requests = attempts, sent
        return best
    verdict = _salvage(failed, sources, retried=len(failed) > 1)
    verdict.attempts, verdict.requests = attempts, sent
    if check is not None and verdict.status == "answered":
        verdict.checked = check(verdict.spans)
    return verdict


def _passed(result: GateResult) -> list[AnswerSpan] | None:
    """The spans to show of a reply that passed the gate (prose or a gap failing its rule is
    left out: not claims, so no retry), or None."""
    if isinstance(result, GatePassed):
        return result.spans
    if isinstance(result, GateFailed) and _only_prose_failed(result):
        return result.kept
    return None


def _keeps_more(new: Checked | None, old: Checked | None) -> bool:
    """The newer judged reply keeps more claims than the older (fewer removed on a tie)."""
    if new is None or old is None or not new.judged:
        return False
    return (new.claims_left, -new.removed) > (old.claims_left, -old.removed)
