"""What of a reply still arriving may be shown (pure): the spans that passed the gate, in reply
order, as a snapshot that only grows (docs/contracts.md, "Partial results").

Each span the reader (span_stream.py) completes is read by the reply's strict rules and judged
by the gate's own ``Judge``, alone. A span is shown once it verified and every span before it
is decided: a failed one is left out, as the final answer leaves it out. Showing stops for the
rest of the reply (the final answer decides) at a span that waits for the whole reply (prose
stating a count, checked against the number of claims), at a claim when the model's support
check is on (its one verdict comes after the reply: ``claims_wait``), at a span that is no span
(the reply is malformed), and at a refusal. A reply that starts again (a transient error, a
new litellm call) is read afresh, and its snapshot shown only where it extends what was shown.
"""

from __future__ import annotations

from ..core.records import Source
from .envelope import ReplyClaim, read_span, says
from .gate import AnswerSpan, Judge
from .prose import Undecided
from .span_stream import SpanReader


class Preview:
    """One attempt's reply, fed as it arrives; ``feed`` returns each new, longer snapshot."""

    def __init__(self, sources: list[Source], question: str, claims_wait: bool = False) -> None:
        self.judge = Judge(sources, question)
        self.claims_wait = claims_wait
        self.shown: list[AnswerSpan] = []  # the last snapshot returned
        self.restart()

    def restart(self) -> None:
        """The reply starts again from its first character."""
        self.reader = SpanReader()
        self.read: list[AnswerSpan] = []  # what this reading verified, in order
        self.index = 0
        self.waiting = False  # a span waits for the whole reply: nothing more is shown

    def feed(self, piece: str) -> list[AnswerSpan] | None:
        """The snapshot when ``piece`` made it grow, else None."""
        if self.waiting:
            return None
        for value in self.reader.feed(piece):
            if self._decided(value):
                continue
            self.waiting = True
            break
        grew = len(self.read) > len(self.shown) and self.read[: len(self.shown)] == self.shown
        if not grew:
            return None
        self.shown = list(self.read)
        return list(self.shown)

    def _decided(self, value: object) -> bool:
        """Judge one span (shown or left out); False when it must wait for the whole reply."""
        span = read_span(value)
        if span is None or says(self.reader.refused):
            return False
        if self.claims_wait and isinstance(span, ReplyClaim):
            return False
        try:
            judged = self.judge.span(self.index, span, None)
        except Undecided:
            return False
        self.index += 1
        if judged.kept is not None:
            self.read.append(judged.kept)
        return True
