"""The server's replies built from what the answer and index layers hold: status, history
records and resolved citations with their current lines (models in core/responses.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.answers import Exact, Gone, Moved, Resolution
from ..core.responses import (
    EmbedderStatus,
    HistoryRecord,
    ResolvedCitation,
    RootStatus,
    SkippedFile,
)

if TYPE_CHECKING:
    from pydantic import ValidationError

    from ..answer.history import ResolvedEntry
    from ..ingest.scan import Skip

SKIPPED_SHOWN = 50  # status lists this many skipped files with their reasons; the count is whole


def with_lines(resolution: Resolution, text: str | None) -> Resolution:
    """Add the cited lines as they read now, so the client can show them without a file read."""
    if text is not None and isinstance(resolution, (Exact, Moved)):
        lines = text.splitlines()[resolution.start_line - 1 : resolution.end_line]
        return resolution.model_copy(update={"lines": lines})
    return resolution


def first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}"


def history_record(
    item: ResolvedEntry, root: Path, shown: dict[str, str | None], private: dict[str, str]
) -> HistoryRecord:
    """One history entry; ``shown[path]`` is the text each citation was resolved against,
    ``private[path]`` why a file's lines are withheld."""
    citations = []
    for one in item.citations:
        path = one.citation.path
        resolution = one.resolution
        if path in private:
            resolution = Gone(path=path, reason=private[path])
        citations.append(
            ResolvedCitation(
                citation=one.citation, resolution=with_lines(resolution, shown.get(path))
            )
        )
    return HistoryRecord(**dict(item.entry), root=str(root), citations=citations)


def status(
    root: Path,
    counts: dict[str, Any],
    *,
    indexing: bool,
    embedding: str,
    skipped: list[Skip],
    index_dir: Path,
) -> RootStatus:
    idle = {"name": embedding, "state": "idle", "vectors": 0, "error": ""}
    return RootStatus(
        root=str(root),
        index_dir=str(index_dir),  # in the user's cache when the root cannot be written
        files_indexed=counts.get("files_indexed", 0),
        chunks=counts.get("chunks", 0),
        pending=counts.get("pending", 0),
        indexing=indexing,
        last_update=counts.get("last_update"),
        embedder=EmbedderStatus(**counts.get("embedder", idle)),
        meaning=EmbedderStatus(**counts.get("meaning", {**idle, "name": "minilm"})),
        error=counts.get("error"),
        skipped_count=len(skipped),
        skipped=[SkippedFile(path=s.path, reason=s.reason) for s in skipped[:SKIPPED_SHOWN]],
    )
