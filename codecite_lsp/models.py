"""Typed units shared by every step of the pipeline.

Chunks and retrieval results are plain frozen dataclasses (they are made by the thousand);
answers and citations are pydantic models because they cross process boundaries as JSON
(CLI ``--json``, the LSP ``codecite/ask`` request, the stored history).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def content_hash(text: str) -> str:
    """sha256 of the text with line endings normalised, so CRLF checkouts hash like LF ones."""
    return hashlib.sha256(normalise_newlines(text).encode("utf-8")).hexdigest()


def file_revision(data: bytes) -> str:
    """Revision of a whole file: sha256 of its raw bytes."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class Chunk:
    """A syntax-bounded slice of one file: whole lines, never cut inside a line."""

    path: str  # repo-relative, "/" separators
    language: str
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    start_byte: int
    end_byte: int  # exclusive
    symbol: str | None  # symbol path, e.g. "AuthService.rotate_key"
    kind: str  # "function", "class", "method", "block", "heading", "paragraph", ...
    text: str  # exactly the file's lines start_line..end_line (decoded)
    content_hash: str
    revision: str  # revision of the whole file the chunk was cut from

    @property
    def id(self) -> str:
        """Deterministic row key: re-running an ingest writes the same ids (idempotent)."""
        key = f"{self.path}\0{self.start_line}\0{self.content_hash}"
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Result:
    """One retrieved chunk. ``to_json`` gives the contract's Result shape."""

    path: str
    start_line: int
    end_line: int
    symbol: str | None
    score: float
    content_hash: str
    text: str
    language: str = ""
    kind: str = ""
    start_byte: int = 0
    end_byte: int = 0
    revision: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "symbol": self.symbol,
            "score": self.score,
            "content_hash": self.content_hash,
            "text": self.text,
        }


# ---------------------------------------------------------------------------------------------
# Answers (contracts.md: "Answer")


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


class ClaimSpan(_Model):
    kind: Literal["claim"] = "claim"
    text: str
    citations: list[Citation] = Field(min_length=1)


Span = Annotated[ProseSpan | ClaimSpan, Field(discriminator="kind")]

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


class Refused(_Model):
    status: Literal["refused"] = "refused"
    trace_id: str = ""
    reason: RefusalReason
    detail: str
    retrieved: list[RetrievedRef] = Field(default_factory=list)


Answer = Annotated[Answered | Refused, Field(discriminator="status")]


# ---------------------------------------------------------------------------------------------
# Citation resolution against the current files


class Exact(_Model):
    state: Literal["exact"] = "exact"
    path: str
    start_line: int
    end_line: int


class Moved(_Model):
    state: Literal["moved"] = "moved"
    path: str
    start_line: int
    end_line: int
    old_start_line: int
    old_end_line: int


class Stale(_Model):
    state: Literal["stale"] = "stale"
    path: str
    reason: str


class Gone(_Model):
    state: Literal["gone"] = "gone"
    path: str
    reason: str


Resolution = Annotated[Exact | Moved | Stale | Gone, Field(discriminator="state")]
