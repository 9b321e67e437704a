"""JSON shapes of the server's answers (status, history entries, resolved citations)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError

    from ..answer.history import ResolvedEntry
    from ..ingest.scan import Skip

SKIPPED_SHOWN = 50  # status lists this many skipped files with their reasons; the count is whole


def with_lines(resolution: dict[str, Any], text: str | None) -> dict[str, Any]:
    """Add the cited lines as they read now, so the client can show them without a file read."""
    if text is not None and resolution["state"] in ("exact", "moved"):
        lines = text.splitlines()
        resolution["lines"] = lines[resolution["start_line"] - 1 : resolution["end_line"]]
    return resolution


def first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}"


def history_record(
    item: ResolvedEntry, root: Path, shown: dict[str, str | None], private: dict[str, str]
) -> dict[str, Any]:
    """One history entry; ``shown[path]`` is the text each citation was resolved against,
    ``private[path]`` why a file's lines are withheld."""
    record: dict[str, Any] = item.entry.model_dump(mode="json")
    record["root"] = str(root)
    record["citations"] = []
    for one in item.citations:
        path = one.citation.path
        resolution = one.resolution.model_dump(mode="json")
        if path in private:
            resolution = {"state": "gone", "path": path, "reason": private[path]}
        record["citations"].append(
            {
                "citation": one.citation.model_dump(mode="json"),
                "resolution": with_lines(resolution, shown.get(path)),
            }
        )
    return record


def status(
    root: Path,
    counts: dict[str, Any],
    *,
    indexing: bool,
    embedding: str,
    skipped: list[Skip],
    index_dir: Path,
) -> dict[str, Any]:
    return {
        "root": str(root),
        "index_dir": str(index_dir),  # in the user's cache when the root cannot be written
        "files_indexed": counts.get("files_indexed", 0),
        "chunks": counts.get("chunks", 0),
        "pending": counts.get("pending", 0),
        "indexing": indexing,
        "last_update": counts.get("last_update"),
        "embedder": counts.get("embedder", {"name": embedding, "state": "idle"}),
        "error": counts.get("error"),
        "skipped_count": len(skipped),
        "skipped": [{"path": s.path, "reason": s.reason} for s in skipped[:SKIPPED_SHOWN]],
    }
