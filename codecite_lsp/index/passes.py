"""The records of an index pass: what it gathers per commit (and how one read file goes into
it), what it reports, its status."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, TypedDict

from ..core.records import Chunk
from ..ingest.languages import language_for_path
from ..ingest.workers import chunked_isolated

if TYPE_CHECKING:
    from ..ingest.scan import Skip, SourceFile, WorkspaceFile
    from ..ingest.workers import Prepared
    from .store import FileRecord, Store

log = logging.getLogger(__name__)


@dataclass
class IndexReport:
    files: int  # files in the index afterwards
    chunks: int  # chunks in the index afterwards
    seconds: float
    written_files: int
    deleted_files: int
    skipped: list[Skip] = field(default_factory=list)
    written_chunks: int = 0
    cancelled: bool = False
    unchanged: bool = False  # told by the manifest: nothing read, the index not even opened

    def summary(self) -> str:
        text = (
            f"indexed {self.files} files, {self.chunks} chunks in {self.seconds:.1f} s "
            f"({self.written_files} written, {self.deleted_files} deleted, "
            f"{len(self.skipped)} skipped)"
        )
        if self.unchanged:
            return text + " - unchanged since the last pass"
        return text + (" - cancelled" if self.cancelled else "")


class EmbedderState(TypedDict):
    name: str
    state: str  # "off", "idle", "embedding", "ready", "failed"
    vectors: int
    error: str


class IndexStatus(TypedDict):
    files_indexed: int
    chunks: int
    pending: int
    last_update: float | None  # time.time() of the last write
    embedder: EmbedderState
    meaning: EmbedderState  # the semantic leg's vectors (index/filling.py, MeaningFiller)


@dataclass
class Totals:
    files: int = 0
    chunks: int = 0
    deleted: int = 0
    skipped: list[Skip] = field(default_factory=list)
    cancelled: bool = False
    walked: list[WorkspaceFile] | None = None  # the full pass's walk, for the manifest


@dataclass
class Batch:
    """Writes gathered for one commit."""

    chunks: dict[str, list[Chunk]] = field(default_factory=dict)
    search_texts: dict[str, list[str]] = field(default_factory=dict)  # per chunk of `chunks`
    records: list[FileRecord] = field(default_factory=list)
    # Same revision, new stat: only the file row changes (if its chunks check out).
    touched: list[tuple[FileRecord, SourceFile]] = field(default_factory=list)
    deletes: set[str] = field(default_factory=set)
    skipped: list[Skip] = field(default_factory=list)
    chunk_rows: int = 0

    def __len__(self) -> int:
        return len(self.records) + len(self.touched) + len(self.deletes)

    def add(
        self,
        rel: str,
        ready: Prepared,
        record: FileRecord | None,
        rechunk: bool,
        budget: int,
    ) -> None:
        """Put one file's new state (chunks + row, row only, or deletion) into the batch."""
        from ..ingest.scan import Skip

        source = ready.source
        if isinstance(source, Skip):
            self.skipped.append(source)
            if record is not None:
                self.deletes.add(rel)
        elif not rechunk and record is not None and record.revision == source.revision:
            self.touched.append((file_record(rel, source, record.chunk_count), source))
        else:
            self.add_chunks(rel, ready, budget)

    def add_chunks(self, rel: str, ready: Prepared, budget: int) -> None:
        """Put one read file's chunks and row into the batch (chunking it here if the worker did
        not), or its deletion if it cannot be chunked."""
        from ..ingest.scan import Skip, SourceFile

        source = ready.source
        assert isinstance(source, SourceFile)
        if ready.chunks is None and ready.error is None:
            ready = chunked_isolated(rel, source, budget)
        if isinstance(ready.source, Skip):  # the parser crashed on it
            self.skipped.append(ready.source)
            self.deletes.add(rel)
            return
        if ready.error is not None:  # a chunker bug must not stop the whole index
            log.error("could not chunk %s: %s", rel, ready.error)
            self.skipped.append(Skip(rel, f"could not be chunked ({ready.error})"))
            self.deletes.add(rel)
            return
        chunks = ready.chunks or []
        self.chunks[rel] = chunks
        self.search_texts[rel] = ready.search_texts or []
        self.records.append(file_record(rel, source, len(chunks)))
        self.chunk_rows += len(chunks)


def known_revision(known: Mapping[str, FileRecord], path: str) -> str | None:
    record = known.get(path)
    return None if record is None else record.revision


def epoch(iso: str | None) -> float | None:
    """The time.time() of an ISO time written in meta.json, None if absent or unreadable."""
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return None


def unchanged(record: FileRecord | None, size: int, mtime_ns: int, chunk_rows: int) -> bool:
    """The stat shortcut: same size and mtime, and every chunk row of the file present."""
    return (
        record is not None
        and record.size == size
        and record.mtime_ns == mtime_ns
        and record.chunk_count == chunk_rows
    )


def file_record(rel: str, source: SourceFile, chunk_count: int) -> FileRecord:
    from .store import FileRecord

    return FileRecord(
        path=rel,
        revision=source.revision,
        size=source.size,
        mtime_ns=source.mtime_ns,
        chunk_count=chunk_count,
        language=language_for_path(rel) or "text",
    )


def pass_report(store: Store, started: float, totals: Totals) -> IndexReport:
    return IndexReport(
        files=store.file_count(),
        chunks=store.chunk_count(),
        seconds=time.monotonic() - started,
        written_files=totals.files,
        deleted_files=totals.deleted,
        skipped=totals.skipped,
        written_chunks=totals.chunks,
        cancelled=totals.cancelled,
    )
