"""Answered questions, kept in the index folder so their citations can be re-opened after edits.

Each line of ``history.jsonl`` is one answer with content-keyed citations (path, content_hash,
quote_hash, lines, bytes, revision, chunk_hash; never chunk ids, which one re-index invalidates).
``resolved`` re-anchors every citation against the current files: exact / moved / stale / gone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..core.answers import Answered, Citation, Refused
from ..core.responses import HistoryEntry, ResolvedCitation
from ..verify.anchors import resolve
from .trace import append_line, read_lines_newest_first

HISTORY_FILE = "history.jsonl"


class ResolvedEntry(BaseModel):
    entry: HistoryEntry
    citations: list[ResolvedCitation]


ReadText = Callable[[str], "str | None"]


def _plain_context(context: object) -> dict[str, Any] | None:
    if context is None:
        return None
    if isinstance(context, BaseModel):
        return context.model_dump(mode="json")
    if dataclasses.is_dataclass(context) and not isinstance(context, type):
        return dataclasses.asdict(context)
    if isinstance(context, dict):
        return context
    return {"value": str(context)}


def read_repo_text(repo: Path) -> ReadText:
    """The default reader: the file on disk, None when it is gone or unreadable as text."""

    def read(rel: str) -> str | None:
        try:
            return (repo / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    return read


def citations_of(answer: Answered | Refused) -> list[Citation]:
    if not isinstance(answer, Answered):
        return []
    return [c for span in answer.spans if span.kind == "claim" for c in span.citations]


class History:
    def __init__(self, index_dir: Path) -> None:
        self.path = Path(index_dir) / HISTORY_FILE

    def append(
        self, question: str, answer: Answered | Refused, context: object = None
    ) -> HistoryEntry:
        entry = HistoryEntry(
            question=question,
            time=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            answer=answer,
            context=_plain_context(context),
        )
        append_line(self.path, entry.model_dump(mode="json"))
        return entry

    def entries(self, limit: int = 50, offset: int = 0) -> list[HistoryEntry]:
        """The newest ``limit`` entries after skipping the ``offset`` newest, oldest first; bad
        lines are skipped. Read from the end of the file: a page never reads the whole file."""
        found: list[HistoryEntry] = []
        for record in read_lines_newest_first(self.path):
            if len(found) >= limit:
                break
            try:
                entry = HistoryEntry.model_validate(record)
            except ValidationError:
                continue  # a line from an older or foreign writer: skip, keep the rest
            if offset > 0:
                offset -= 1
                continue
            found.append(entry)
        return found[::-1]

    def resolved(
        self, repo: Path, read_text: ReadText | None = None, limit: int = 50, offset: int = 0
    ) -> list[ResolvedEntry]:
        """Every citation of the newest entries resolved against the current text of its file.

        ``read_text(rel_path)`` gives a file's current text (the LSP passes unsaved buffers);
        each file is read once.
        """
        read = read_text or read_repo_text(repo)
        texts: dict[str, str | None] = {}
        out: list[ResolvedEntry] = []
        for entry in self.entries(limit, offset):
            resolved = []
            for citation in citations_of(entry.answer):
                if citation.path not in texts:
                    texts[citation.path] = read(citation.path)
                resolution = resolve(citation, texts[citation.path])
                resolved.append(ResolvedCitation(citation=citation, resolution=resolution))
            out.append(ResolvedEntry(entry=entry, citations=resolved))
        return out
