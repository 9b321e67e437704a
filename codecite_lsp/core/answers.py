"""Answers, citations and their resolutions: pydantic models, because they cross process
boundaries as JSON (CLI ``--json``, the LSP ``codecite/ask`` request, the stored history).

Kept apart from :mod:`.models` so that indexing (and its worker processes) never imports
pydantic.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# ---------------------------------------------------------------------------------------------
# Answers (docs/contracts.md: "Answer"; docs/answer.schema.json is generated from these)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Citation(_Model):
    path: str
    start_line: int
    end_line: int
    quote: str
    content_hash: str  # sha256 of the quoted lines (start_line..end_line), newline-normalised
    revision: str  # file revision the citation was verified against
    # Content keys kept so the citation can be re-anchored after edits (no chunk ids: those are
    # artefacts of one ingest run).
    start_byte: int = 0
    end_byte: int = 0
    quote_hash: str = ""  # sha256 of the whitespace-normalised quote
    chunk_hash: str = ""  # content_hash of the chunk the quote was verified in


class ProseSpan(_Model):
    kind: Literal["prose"] = "prose"
    text: str


class GapSpan(_Model):
    """What the retrieved code does not show, worded as such ("Not shown in the retrieved code:
    ..."): not a claim about the code, so it has no citation. Editors that do not know the kind
    show its text as prose, which reads correctly."""

    kind: Literal["gap"] = "gap"
    text: str


class ClaimSpan(_Model):
    kind: Literal["claim"] = "claim"
    text: str
    citations: list[Citation] = Field(min_length=1)


Span = Annotated[ProseSpan | GapSpan | ClaimSpan, Field(discriminator="kind")]

RefusalReason = Literal[
    "no_span_in_retrieval", "unverified_citation", "ambiguous", "stale_index", "model_error"
]


class RetrievedRef(_Model):
    path: str
    start_line: int
    end_line: int
    score: float


class Answered(_Model):
    status: Literal["answered"] = "answered"
    trace_id: str = ""
    spans: list[Span]
    note: str | None = None  # e.g. "indexing is still running: 40 files pending"
    # The question followed up on the conversation sent with it (answer/followup.py: continues);
    # False: it stood alone, and a client starts a new conversation with it.
    continued: bool = False


class Refused(_Model):
    status: Literal["refused"] = "refused"
    trace_id: str = ""
    reason: RefusalReason
    detail: str
    retrieved: list[RetrievedRef] = Field(default_factory=list)
    continued: bool = False  # as in Answered


Answer = Annotated[Answered | Refused, Field(discriminator="status")]


class AnswerSnapshot(_Model):
    """A partial result of ``codecite/ask`` (the ``$/progress`` value on the client's
    ``partialResultToken``): every span verified so far in this attempt, in reply order; a
    higher ``attempt`` (2, the stricter retry) replaces what was shown."""

    attempt: int
    spans: list[Span]


# ---------------------------------------------------------------------------------------------
# Citation resolution against the current files


def _current_lines() -> Any:
    """``lines``: the resolved lines as they read now, set by the server when it has the file's
    text (openCitation, history), so a client shows them without reading the file; omitted,
    not null, when absent."""
    return Field(
        default=None,
        exclude_if=lambda lines: lines is None,
        description="The lines as they read now; absent when the server did not read them.",
    )


class Exact(_Model):
    state: Literal["exact"] = "exact"
    path: str
    start_line: int
    end_line: int
    lines: list[str] | None = _current_lines()


class Moved(_Model):
    state: Literal["moved"] = "moved"
    path: str
    start_line: int
    end_line: int
    old_start_line: int
    old_end_line: int
    lines: list[str] | None = _current_lines()


class Stale(_Model):
    state: Literal["stale"] = "stale"
    path: str
    reason: str


class Gone(_Model):
    state: Literal["gone"] = "gone"
    path: str
    reason: str


Resolution = Annotated[Exact | Moved | Stale | Gone, Field(discriminator="state")]
