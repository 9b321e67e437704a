"""Partial results: one attempt's streamed reply, each longer snapshot of its verified spans
handed to the caller's ``on_spans`` with the attempt's number (1, or 2 for the stricter retry).
What may be shown is decided by verify/preview.py; this is the wiring to a model call."""

from __future__ import annotations

from collections.abc import Callable

from ..core.records import Source
from ..verify.gate import AnswerSpan
from ..verify.preview import Preview

OnSpans = Callable[[int, list[AnswerSpan]], None]  # (attempt, snapshot), from a worker thread


class Shown:
    """A model call's listener (llm.Listener) showing one attempt's reply as it verifies."""

    def __init__(
        self,
        attempt: int,
        sources: list[Source],
        question: str,
        on_spans: OnSpans,
        claims_wait: bool,
    ) -> None:
        self.attempt = attempt
        self.preview = Preview(sources, question, claims_wait)
        self.on_spans = on_spans

    def feed(self, piece: str) -> None:
        snapshot = self.preview.feed(piece)
        if snapshot is not None:
            self.on_spans(self.attempt, snapshot)

    def restart(self) -> None:
        self.preview.restart()
