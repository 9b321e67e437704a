"""What the server's other requests return (docs/contracts.md): search results, status, history
pages. Pydantic models, like :mod:`.answers`, so each shape has one definition: the service
builds them, the LSP, MCP and CLI serialise them with ``model_dump(mode="json")``, and
docs/answer.schema.json (with the editors' TypeScript and Lua types) is generated from them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .answers import Answer, Citation, Resolution
from .records import Result


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------------------------------
# codecite/search, `codecite search --json`, the MCP tool search_code


class UntrustedText(_Model):
    """Text in a chunk addressed to an AI model (ingest/injection.py, found when indexing)."""

    kind: str = Field(
        description="addressed_to_ai, override, role_marker, chat_token, fence_mimic, "
        "label_steering or invisible."
    )
    line: int = Field(description="The file line it starts on, 1-based.")
    excerpt: str = Field(description="What matched, invisible characters spelled out.")


class SearchResult(_Model):
    """One retrieved chunk (the contract's "Result")."""

    path: str = Field(description="Repository-relative, '/' separators.")
    start_line: int = Field(description="1-based.")
    end_line: int = Field(description="1-based, inclusive.")
    symbol: str | None = Field(description="The definition the chunk holds, if any.")
    score: float = Field(description="Relevance, 1.0 for the best possible match.")
    content_hash: str
    text: str = Field(description="Lines start_line..end_line of the file, verbatim.")
    untrusted: list[UntrustedText] = Field(
        default_factory=list,
        description="Text in these lines addressed to an AI model: a model is shown the chunk as "
        "untrusted data and no claim rests on it alone. Empty for ordinary code.",
    )

    @classmethod
    def of(cls, result: Result) -> SearchResult:
        """The wire fields of a retrieval result (the ranking's own fields stay behind)."""
        chunk = result.chunk
        return cls(
            path=chunk.path,
            start_line=chunk.start_line,
            end_line=chunk.end_line,
            symbol=chunk.symbol,
            score=result.score,
            content_hash=chunk.content_hash,
            text=chunk.text,
            untrusted=[
                UntrustedText(kind=f.kind, line=f.line, excerpt=f.excerpt) for f in chunk.untrusted
            ],
        )


def result_json(result: Result) -> dict[str, object]:
    """The wire fields (the contract's Result), for scripts that take results in process (the
    shared benchmark harnesses); the CLI and servers dump SearchResult the same way."""
    return SearchResult.of(result).model_dump(mode="json")


class SearchReply(_Model):
    results: list[SearchResult] = Field(description="Best first.")


# ---------------------------------------------------------------------------------------------
# codecite/status


class EmbedderStatus(_Model):
    name: str
    state: str = Field(description="off, idle, embedding, ready or failed.")
    vectors: int = Field(description="Chunks that have a vector.")
    error: str = Field(description="Why the last fill failed; empty otherwise.")


class SkippedFile(_Model):
    path: str
    reason: str


class RootStatus(_Model):
    root: str
    index_dir: str = Field(description="The user's cache folder when the root cannot be written.")
    files_indexed: int
    chunks: int
    pending: int
    indexing: bool
    last_update: float | None = Field(description="Seconds since the epoch of the last write.")
    embedder: EmbedderStatus
    meaning: EmbedderStatus = Field(
        description="The semantic leg's vectors (MiniLM), written behind the keyword index."
    )
    error: str | None = Field(description="Why the index could not be read; null when fine.")
    skipped_count: int
    skipped: list[SkippedFile] = Field(description="The first skipped files, with reasons.")


class StatusReply(_Model):
    roots: list[RootStatus]


# ---------------------------------------------------------------------------------------------
# codecite/history (and the stored history.jsonl line it is read from)


class HistoryEntry(BaseModel):
    """One line of history.jsonl. Unknown keys are ignored: lines outlive the version that
    wrote them."""

    question: str
    time: str  # ISO 8601, UTC
    answer: Answer
    context: dict[str, Any] | None = None  # the editor context the question was asked in


class ResolvedCitation(_Model):
    citation: Citation
    resolution: Resolution


class HistoryRecord(HistoryEntry):
    """A history entry as codecite/history sends it: its root, and each citation of its claims
    (in order) resolved against the current files."""

    root: str
    citations: list[ResolvedCitation]


class HistoryPage(_Model):
    entries: list[HistoryRecord] = Field(description="Newest first.")


# ---------------------------------------------------------------------------------------------
# codecite.reindex, codecite/localModels


class ReindexReply(_Model):
    started: list[str] = Field(description="The workspace roots whose full index pass started.")


class LocalModelsReply(_Model):
    host: str | None = Field(
        description="The local Ollama server asked; null when OLLAMA_HOST names another machine "
        "(never asked: loopback only)."
    )
    models: list[str] = Field(
        description="Its models as litellm model strings (`ollama/<name>`); empty when none runs."
    )
