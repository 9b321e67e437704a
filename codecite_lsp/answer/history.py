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
from ..core.files import LARGE_FILE_BYTES, read_regular
from ..core.responses import HistoryEntry, ResolvedCitation
from ..verify.anchors import resolve
from .line_index import LineIndex
from .trace import append_line

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
            return read_regular(repo / rel, LARGE_FILE_BYTES)[0].decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    return read


def citations_of(answer: Answered | Refused) -> list[Citation]:
    if not isinstance(answer, Answered):
        return []
    return [c for span in answer.spans if span.kind == "claim" for c in span.citations]


def _entry_time(record: dict[str, Any]) -> str | None:
    """An entry's sort key in the offset index; a line that is plainly no entry is left out
    (each entry is validated when its page is read: validating 50,000 at once costs seconds)."""
    time = record.get("time")
    if isinstance(time, str) and isinstance(record.get("question"), str):
        return time if isinstance(record.get("answer"), dict) else None
    return None


def _page(count: int, limit: int, offset: int) -> range:
    """Positions (oldest first) of the newest ``limit`` of ``count`` after skipping ``offset``."""
    end = max(0, count - offset)
    return range(max(0, end - limit), end)


class History:
    def __init__(self, index_dir: Path) -> None:
        self.path = Path(index_dir) / HISTORY_FILE
        self._index = LineIndex(self.path, _entry_time)

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
        """The newest ``limit`` entries after skipping the ``offset`` newest, oldest first,
        read through the offset index: a page costs its own lines at any offset. An entry that
        does not validate (an older or foreign writer) is left out of its page."""
        table = self._index.table()
        records = [self._index.read(table, at) for at in _page(len(table), limit, offset)]
        if any(record is None for record in records):  # the log changed under its index
            table = self._index.rebuild()
            records = [self._index.read(table, at) for at in _page(len(table), limit, offset)]
        found: list[HistoryEntry] = []
        for record in records:
            try:
                found.append(HistoryEntry.model_validate(record))
            except ValidationError:
                continue
        return found

    def times(self) -> list[str]:
        """Every entry's time, newest first, from the index alone (to merge several roots)."""
        table = self._index.table()
        return [table.key(at) for at in range(len(table) - 1, -1, -1)]

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
