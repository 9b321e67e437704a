"""What of a reply still arriving may be shown (pure): the spans that passed the gate, in reply
order, as a snapshot that only grows (docs/contracts.md, "Partial results").

Each span the reader (span_stream.py) completes is read by the reply's strict rules and judged
by the gate's own ``Judge``, alone. A span is shown once it verified and every span before it
is decided: a failed one is left out, as the final answer leaves it out. Showing stops for the
rest of the reply (the final answer decides) at a span that waits for the whole reply (prose
stating a count, checked against the number of claims), at a span that is no span (the reply is
malformed), and at a refusal. A reply that starts again (a transient error, a new litellm call)
is read afresh, and its snapshot shown only where it extends what was shown.

With the model's support check on (``checked``), a verified claim also waits for its own verdict
(the caller asks for it: ``unjudged``, then hands it to ``verdict``): entailed, it is shown;
not, it is left out and the spans after it go on; a verdict never given shows nothing after it.
"""

from __future__ import annotations

from ..core.answers import ClaimSpan
from ..core.records import Source
from .envelope import read_span, says
from .gate import AnswerSpan, Judge
from .prose import Undecided
from .span_stream import SpanReader


def claim_key(claim: ClaimSpan) -> str:
    """A claim's text and citations: the same claim read again has the same key."""
    return claim.model_dump_json()


class Preview:
    """One attempt's reply, fed as it arrives; ``feed`` returns each new, longer snapshot."""

    def __init__(self, sources: list[Source], question: str, checked: bool = False) -> None:
        self.judge = Judge(sources, question, wording=not checked)
        self.checked = checked
        self.shown: list[AnswerSpan] = []  # the last snapshot returned
        self.verdicts: dict[str, bool] = {}  # claim_key -> entailed, as the checks answered
        self.unjudged: list[ClaimSpan] = []  # verified claims whose verdict the caller asks for
        self.restart()

    def restart(self) -> None:
        """The reply starts again from its first character."""
        self.reader = SpanReader()
        self.read: list[AnswerSpan] = []  # what this reading verified, in order
        self.index = 0
        self.waiting = False  # a span waits for the whole reply: nothing more is read

    def feed(self, piece: str) -> list[AnswerSpan] | None:
        """The snapshot when ``piece`` made it grow, else None."""
        if not self.waiting:
            for value in self.reader.feed(piece):
                if self._decided(value):
                    continue
                self.waiting = True
                break
        return self._grown()

    def verdict(self, claim: ClaimSpan, entailed: bool) -> list[AnswerSpan] | None:
        """A claim's support verdict; the snapshot when it made it grow, else None."""
        self.verdicts[claim_key(claim)] = entailed
        return self._grown()

    def _grown(self) -> list[AnswerSpan] | None:
        snapshot = self._showable()
        grew = len(snapshot) > len(self.shown) and snapshot[: len(self.shown)] == self.shown
        if not grew:
            return None
        self.shown = snapshot
        return list(snapshot)

    def _showable(self) -> list[AnswerSpan]:
        """What was read, up to the first claim still without its verdict."""
        if not self.checked:
            return list(self.read)
        showable: list[AnswerSpan] = []
        for span in self.read:
            if isinstance(span, ClaimSpan):
                entailed = self.verdicts.get(claim_key(span))
                if entailed is None:
                    break
                if not entailed:
                    continue
            showable.append(span)
        return showable

    def _decided(self, value: object) -> bool:
        """Judge one span (shown or left out); False when it must wait for the whole reply."""
        span = read_span(value)
        if span is None or says(self.reader.refused):
            return False
        try:
            judged = self.judge.span(self.index, span, None)
        except Undecided:
            return False
        self.index += 1
        if judged.kept is not None:
            self.read.append(judged.kept)
            if self.checked and isinstance(judged.kept, ClaimSpan):
                self.unjudged.append(judged.kept)
        return True
