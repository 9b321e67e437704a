"""Partial results: one attempt's streamed reply, each longer snapshot of its verified spans
handed to the caller's ``on_spans`` with the attempt's number (1, or 2 for the stricter retry).
What may be shown is decided by verify/preview.py; this is the wiring to a model call.

With the model's support check on, each claim the preview verifies is judged alone at once
(``Checks``: at most ``WORKERS`` calls at a time, while the reply streams on) and shown once
judged entailed. The final answer takes those verdicts, and asks once about the claims none
judged (support_check.check). A verdict is one claim's text, citations and cited lines asked
about: the retry's claim identical to one already judged (same lines) takes its verdict.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from ..core.answers import ClaimSpan
from ..core.records import Source
from ..verify.gate import AnswerSpan
from ..verify.preview import Preview
from .support_check import Ask, Checked, Verdict, check, judge, messages

OnSpans = Callable[[int, list[AnswerSpan]], None]  # (attempt, snapshot), from a worker thread
WORKERS = 4  # claims judged at once


def _question(claim: ClaimSpan, sources: list[Source]) -> str:
    """What is asked about one claim alone: the same question has the same verdict."""
    return messages([claim], sources)[-1]["content"]


class Checks:
    """One request's support checks, claim by claim, each asked once on a small pool."""

    def __init__(self, ask: Ask) -> None:
        self.ask = ask
        self.pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="codecite-support")
        self.asked: dict[str, Future[Verdict]] = {}
        self.batched: dict[str, bool] = {}  # verdicts of the final checks' one calls (a retry's)
        self.lock = threading.Lock()

    def start(self, claim: ClaimSpan, sources: list[Source]) -> Future[Verdict]:
        """The claim's verdict, asked for unless it was already."""
        question = _question(claim, sources)
        with self.lock:
            future = self.asked.get(question)
            if future is None:
                future = self.pool.submit(self._judge, claim, sources)
                self.asked[question] = future
            return future

    def _judge(self, claim: ClaimSpan, sources: list[Source]) -> Verdict:
        judged = judge([claim], sources, self.ask)
        return judged if isinstance(judged, str) else judged[0]

    def check(self, spans: list[AnswerSpan], sources: list[Source]) -> Checked:
        """The final answer's check: the verdicts asked for (waited for), one call for the rest."""
        batched = 0

        def counted(sent: list[dict[str, str]]) -> str:
            nonlocal batched
            batched += 1
            return self.ask(sent)

        unknown: list[ClaimSpan] = []

        def known(claim: ClaimSpan) -> Verdict | None:
            verdict = self._known(claim, sources)
            if verdict is None:
                unknown.append(claim)
            return verdict

        checked = check(spans, sources, counted, known)
        if checked.judged:  # a retry repeating a claim is not asked about it again
            with self.lock:
                for claim in unknown:
                    self.batched[_question(claim, sources)] = claim not in checked.dropped
        record: dict[str, Any] = {**checked.record, "mode": "per_claim"}
        record["calls"] = len(self.asked) + batched
        return replace(checked, record=record)

    def _known(self, claim: ClaimSpan, sources: list[Source]) -> Verdict | None:
        question = _question(claim, sources)
        with self.lock:
            future = self.asked.get(question)
            if future is None:
                return self.batched.get(question)
        try:
            return future.result()
        except CancelledError:
            return "cancelled"

    def close(self) -> None:
        """No more checks: those not started are dropped (a cancelled request's included)."""
        self.pool.shutdown(wait=False, cancel_futures=True)


class Shown:
    """A model call's listener (llm.Listener) showing one attempt's reply as it verifies."""

    def __init__(
        self,
        attempt: int,
        sources: list[Source],
        question: str,
        on_spans: OnSpans,
        checks: Checks | None,
    ) -> None:
        self.attempt = attempt
        self.sources = sources
        self.preview = Preview(sources, question, checked=checks is not None)
        self.on_spans = on_spans
        self.checks = checks
        # The reply's thread and the checks' threads both grow the snapshot: one at a time.
        self.lock = threading.RLock()
        self.closed = False  # a later attempt, or the answer, came: nothing more is shown

    def feed(self, piece: str) -> None:
        with self.lock:
            self._show(self.preview.feed(piece))
            if self.checks is not None:
                unjudged, self.preview.unjudged = self.preview.unjudged, []
                for claim in unjudged:
                    future = self.checks.start(claim, self.sources)
                    future.add_done_callback(functools.partial(self._judged, claim))

    def _judged(self, claim: ClaimSpan, done: Future[Verdict]) -> None:
        """A verdict came: shown when entailed; a failed check shows nothing after it."""
        if done.cancelled() or isinstance(done.result(), str):
            return
        with self.lock:
            self._show(self.preview.verdict(claim, bool(done.result())))

    def _show(self, snapshot: list[AnswerSpan] | None) -> None:
        if snapshot is not None and not self.closed:
            self.on_spans(self.attempt, snapshot)

    def close(self) -> None:
        """A late verdict of this attempt must not follow a later attempt or the answer."""
        with self.lock:
            self.closed = True

    def restart(self) -> None:
        with self.lock:
            self.preview.restart()
