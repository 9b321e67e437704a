"""The MCP tools' arguments and results: pydantic models, so each tool's JSON schema (what the
agent's model reads) and the validation of its arguments come from one definition.

Every bound here is what keeps a hostile or confused caller from costing the server more than
a normal call: lengths, counts and line numbers are capped, and integers are strict (``"7"`` or
``true`` for a line number is a caller bug, not line 7 or line 1).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..core.limits import (
    MAX_LINE,
    MAX_PATH_CHARS,
    MAX_QUOTE_CHARS,
)
from ..core.responses import SearchResult

Line = Annotated[int, Field(strict=True, ge=1, le=MAX_LINE)]


class _Lines(BaseModel):
    """A path and a line range; extra keys are ignored (shown to the model: see CitationIn)."""

    model_config = ConfigDict(extra="ignore")

    path: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_PATH_CHARS,
            description="File path relative to the repository root, '/' separators.",
        ),
    ]
    start_line: Annotated[Line, Field(description="First cited line, 1-based.")]
    end_line: Annotated[Line, Field(description="Last cited line, 1-based, inclusive.")]

    @model_validator(mode="after")
    def _ordered(self) -> _Lines:
        if self.end_line < self.start_line:
            raise ValueError(f"end_line {self.end_line} is before start_line {self.start_line}")
        return self


class CitationIn(_Lines):
    """One quote attributed to lines of a file. Citations of an `ask` answer can be passed as
    they are (their other keys are ignored)."""

    quote: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_QUOTE_CHARS,
            description="The exact code quoted from those lines (whitespace may differ).",
        ),
    ]

    @model_validator(mode="after")
    def _not_blank(self) -> CitationIn:
        if not self.quote.strip():
            raise ValueError("quote is blank")
        return self


class OpenIn(_Lines):
    """A citation to open; without a quote its lines are shown as they are (unchecked)."""

    quote: Annotated[
        str | None,
        Field(
            max_length=MAX_QUOTE_CHARS,
            description="Optional: the quoted code, to re-locate the lines if they moved.",
        ),
    ] = None


# -- results ---------------------------------------------------------------------------------


class SearchOutput(BaseModel):
    results: list[SearchResult] = Field(description="Best first.")
    note: str | None = Field(
        default=None, description="Set while the index is incomplete (e.g. still indexing)."
    )


class NearestOut(BaseModel):
    start_line: int
    end_line: int
    text: str = Field(description="Those lines of the current file, verbatim: quote these.")
    similarity: float = Field(description="0..1, how close they are to the given quote.")


CheckState = Literal["verified", "moved", "stale", "not_found", "refused"]


class CheckOut(BaseModel):
    path: str
    state: CheckState = Field(
        description=(
            "verified: the quote holds on the cited lines (whitespace aside, whole words, of "
            "substance). moved: it is in the file at start_line.."
            "end_line instead. stale: only a changed version of it is in the file (see nearest). "
            "not_found: nothing like it is in the file, or the file does not exist. refused: "
            "the path is outside the workspace or a secret/ignored file (never read)."
        )
    )
    cited_start_line: int
    cited_end_line: int
    start_line: int | None = Field(
        default=None, description="Where the quote is now (verified and moved only)."
    )
    end_line: int | None = None
    nearest: NearestOut | None = Field(
        default=None, description="stale and not_found: the current lines most like the quote."
    )
    reason: str | None = None


class VerifyOutput(BaseModel):
    summary: str = Field(description="How many citations are in each state.")
    results: list[CheckOut] = Field(description="One per citation, in the order given.")


OpenState = Literal["verified", "moved", "stale", "not_found", "unchecked"]


class OpenOutput(BaseModel):
    path: str
    state: OpenState = Field(
        description="As in verify_citations; unchecked when no quote was given."
    )
    start_line: int = Field(description="The lines shown as cited (resolved, or nearest).")
    end_line: int
    excerpt: str = Field(
        description="Numbered current lines with context; cited lines are marked with '>'."
    )
    reason: str | None = None
