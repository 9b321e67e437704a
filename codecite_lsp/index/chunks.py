"""The ``chunks`` and ``files`` tables of the index, as a part of :class:`~.store.Store`.

- ``chunks``: one row per chunk, with ``search_text`` (built by :func:`.fulltext.search_terms`)
  carrying the full-text index (:mod:`.keyword`).
- ``files``: one row per indexed file. A file's row is written *after* its chunks, so it is
  the commit marker the indexer's crash recovery relies on.

Reads are answered by the in-memory view (:mod:`.view`) when the store has one and it is loaded,
by LanceDB otherwise.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.fulltext import search_terms
from ..core.records import Chunk
from ..core.references import References
from .tables import FileRecord, chunk_from_row, chunk_rows, in_filters, read_column, sql_literal
from .view import written_chunks

if TYPE_CHECKING:
    from .chunk_view import ChunkView

_NAMES_MAX = 500  # names per definitions look-up (retrieval's)


class ChunkTables:
    """The chunk and file rows of one index folder."""

    def __init__(self, index_dir: Path, chunks: Any, files: Any, view: ChunkView | None) -> None:
        self._index_dir = index_dir  # whose in-memory view (this process's) is told of writes
        self.chunks = chunks  # the LanceDB table: the full-text index is built on it
        self._files = files
        self._chunk_schema = chunks.schema
        self._view = view

    # -- the in-memory view ----------------------------------------------------------------

    @property
    def in_memory(self) -> bool:
        """Whether the view holds the rows now (reads then need only keys from LanceDB)."""
        return self._view is not None and self._view.ready

    def pinned(self) -> contextlib.AbstractContextManager[None]:
        """Within: the in-memory view checks the table's version once (a request's reads)."""
        return self._view.pinned() if self._view is not None else contextlib.nullcontext()

    def wait_for_view(self) -> None:
        """Until the in-memory view has loaded (its loading starts with the store)."""
        if self._view is not None:
            self._view.load(wait=True)

    # -- reads -----------------------------------------------------------------------------

    def versions(self) -> dict[str, int]:
        return {"chunks": self.chunks.version, "files": self._files.version}

    def files(self, paths: Collection[str] | None = None) -> dict[str, FileRecord]:
        """Every file row, or only those of ``paths`` (filtered reads: a save reads its own)."""
        wheres = [None] if paths is None else list(in_filters("path", paths))
        found: dict[str, FileRecord] = {}
        for where in wheres:
            query = self._files.search() if where is None else self._files.search().where(where)
            for row in query.limit(None).to_arrow().to_pylist():
                found[row["path"]] = FileRecord(**row)
        return found

    def paths_under(self, folder: str) -> list[str]:
        """The indexed paths inside ``folder`` (repo-relative, any depth)."""
        return read_column(self._files, "path", f"starts_with(path, {sql_literal(folder + '/')})")

    def file_rows(self) -> Any:
        """The files table as Arrow (a base is published from it)."""
        return self._files.to_arrow()

    def file_count(self) -> int:
        return int(self._files.count_rows())

    def chunk_count(self) -> int:
        return int(self.chunks.count_rows())

    def chunk_counts(self) -> Counter[str]:
        """Chunk rows per path (reads the path column only)."""
        return Counter(read_column(self.chunks, "path"))

    def untrusted_chunks(self) -> Counter[str]:
        """Per path, its chunks holding text addressed to an AI reader (two columns read)."""
        table = self.chunks.search().select(["path", "untrusted"]).limit(None).to_arrow()
        columns = table["path"].to_pylist(), table["untrusted"].to_pylist()
        return Counter(path for path, found in zip(*columns, strict=True) if found)

    def hash_paths(self) -> tuple[list[str], list[str], list[str]]:
        """Every chunk row's (content hash, path, language), the three columns only."""
        table = self.chunks.search().select(["content_hash", "path", "language"]).limit(None)
        rows = table.to_arrow()
        return (
            rows["content_hash"].to_pylist(),
            rows["path"].to_pylist(),
            rows["language"].to_pylist(),
        )

    def content_hashes(self) -> list[str]:
        """Every chunk row's content hash (the column only)."""
        return read_column(self.chunks, "content_hash")

    def chunk_revisions(self, paths: Collection[str]) -> dict[str, Counter[str]]:
        """For each path: how many chunk rows carry each file revision."""
        result: dict[str, Counter[str]] = {}
        for where in in_filters("path", paths):
            rows = self.chunks.search().where(where).select(["path", "revision"]).limit(None)
            for row in rows.to_arrow().to_pylist():
                result.setdefault(row["path"], Counter())[row["revision"]] += 1
        return result

    def references(self) -> References:
        """The reference graph of the chunks (no texts read)."""
        found = self._view.references() if self._view is not None else None
        if found is not None:
            return found
        query = self.chunks.search().select(["path", "defines", "uses"]).limit(None)
        table = query.to_arrow()
        columns = [table[name].to_pylist() for name in ("path", "defines", "uses")]
        return References.of_rows(
            (path, defines or [], uses or []) for path, defines, uses in zip(*columns, strict=True)
        )

    def adjacent(self, spans: Collection[tuple[str, int, int]]) -> list[Chunk]:
        """The chunks right above and right below each (path, start_line, end_line) span (a
        file's chunks cover its lines exactly once): one read, whatever the number of spans."""
        if not spans:
            return []
        found = self._view.adjacent(spans) if self._view is not None else None
        if found is not None:
            return found
        where = " OR ".join(
            f"(path = {sql_literal(path)} AND (end_line = {int(start) - 1}"
            f" OR start_line = {int(end) + 1}))"
            for path, start, end in sorted(set(spans))
        )
        return self._read(where)

    def chunks_for_path(self, path: str) -> list[Chunk]:
        found = self._view.for_path(path) if self._view is not None else None
        if found is not None:
            return found
        chunks = self._read(f"path = {sql_literal(path)}")
        return sorted(chunks, key=lambda c: c.start_line)

    def by_ids(self, ids: list[str]) -> list[Chunk | None]:
        """The chunk of each id, in order; None for an id no longer in the table."""
        viewed = self._view.by_ids(ids) if self._view is not None else None
        found: list[Chunk | None] = [None] * len(ids) if viewed is None else viewed
        # what the view lacks: written after its version check, or all of it (no view)
        missing = [key for key, chunk in zip(ids, found, strict=True) if chunk is None]
        if not missing:
            return found
        read = {c.id: c for where in in_filters("id", missing) for c in self._read(where)}
        return [chunk or read.get(key) for key, chunk in zip(ids, found, strict=True)]

    def with_hashes(self, hashes: Collection[str]) -> list[Chunk]:
        """The chunks whose content hash is one of ``hashes``."""
        found = self._view.with_hashes(hashes) if self._view is not None else None
        if found is not None:
            return found
        return [c for where in in_filters("content_hash", hashes) for c in self._read(where)]

    def text_batches(self, rows: int) -> Iterator[tuple[list[str], list[str]]]:
        """Every chunk row's (content hashes, texts), ``rows`` at a time, in one scan of the
        two columns: the whole index read without holding it."""
        scan = self.chunks.search().select(["content_hash", "text"]).limit(None)
        for batch in scan.to_batches(rows):
            yield batch.column("content_hash").to_pylist(), batch.column("text").to_pylist()

    def texts(self, hashes: Collection[str]) -> dict[str, str]:
        """The text of a chunk with each content hash (the two columns only)."""
        texts: dict[str, str] = {}
        for where in in_filters("content_hash", hashes):
            rows = self.chunks.search().where(where).select(["content_hash", "text"])
            for row in rows.limit(None).to_arrow().to_pylist():
                texts.setdefault(row["content_hash"], row["text"])
        return texts

    def naming(self, names: Collection[str], limit: int, column: str = "defines") -> list[Chunk]:
        """Chunks whose ``defines`` (or ``uses``) hold any of ``names`` (case-sensitive)."""
        wanted = sorted({n for n in names if n})[:_NAMES_MAX]
        if not wanted or limit <= 0 or column not in ("defines", "uses"):
            return []
        found = self._view.naming(wanted, limit, column) if self._view else None
        if found is not None:
            return found
        literals = ", ".join(sql_literal(n) for n in wanted)
        query = self.chunks.search().where(f"array_has_any({column}, make_array({literals}))")
        return [chunk_from_row(row) for row in query.limit(limit).to_arrow().to_pylist()]

    def first_words(self) -> list[str]:
        """The full-text words of one chunk row ([] when there is none): a probe's query."""
        sample = self.chunks.search().select(["search_text"]).limit(1).to_arrow()
        return sample["search_text"].to_pylist()[0].split() if sample.num_rows else []

    def _read(self, where: str) -> list[Chunk]:
        rows = self.chunks.search().where(where).limit(None).to_arrow().to_pylist()
        return [chunk_from_row(row) for row in rows]

    # -- writes ----------------------------------------------------------------------------

    def replace(
        self,
        chunks_by_path: Mapping[str, list[Chunk]],
        records: list[FileRecord],
        search_texts: Mapping[str, list[str]] | None = None,
    ) -> None:
        """Give each path of ``chunks_by_path`` exactly those chunks, then commit ``records``.

        A record without an entry in ``chunks_by_path`` only updates the file row (a touched
        file whose content did not change). Three writes, each atomic: a crash between them
        leaves file rows that disagree with the chunks (count, revision or stat), which the
        indexer detects and redoes.
        """
        before = self.chunks.version
        _delete_rows(self.chunks, set(chunks_by_path))
        new_chunks = [c for chunks in chunks_by_path.values() for c in chunks]
        if new_chunks:
            # The indexer's workers may have built the full-text fields alongside the chunks.
            given = search_texts or {}
            texts = [
                text
                for path, chunks in chunks_by_path.items()
                for text in (
                    given[path]
                    if len(given.get(path, ())) == len(chunks)
                    else [search_terms(c.text, c.path, c.symbol) for c in chunks]
                )
            ]
            self.chunks.add(chunk_rows(new_chunks, texts, self._chunk_schema))
        written_chunks(self._index_dir, before, self.chunks.version, chunks_by_path, new_chunks)
        if records:
            self._upsert_files(records)

    def delete(self, paths: Iterable[str]) -> None:
        """Forget these files: file rows first (uncommit), then their chunks."""
        targets = set(paths)
        if not targets:
            return
        _delete_rows(self._files, targets)
        self._delete_chunks(targets)

    def remove_orphans(self) -> int:
        """Delete chunk rows whose path has no file row (left by a crash); returns how many."""
        known = set(self.files())
        orphans = {p: n for p, n in self.chunk_counts().items() if p not in known}
        self._delete_chunks(orphans)
        return sum(orphans.values())

    def _delete_chunks(self, paths: Collection[str]) -> None:
        before = self.chunks.version
        _delete_rows(self.chunks, paths)
        written_chunks(self._index_dir, before, self.chunks.version, paths, [])

    def optimize(self, keep: Any) -> int:
        """Compact both tables (versions younger than ``keep`` stay readable); returns the
        chunks table's version."""
        self.chunks.optimize(cleanup_older_than=keep)
        self._files.optimize(cleanup_older_than=keep)
        return int(self.chunks.version)

    def _upsert_files(self, records: list[FileRecord]) -> None:
        import pyarrow as pa

        latest = {r.path: r for r in records}  # one row per path, the last one wins
        rows = pa.Table.from_pylist([asdict(r) for r in latest.values()], schema=self._files.schema)
        (
            self._files.merge_insert("path")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(rows)
        )


def _delete_rows(table: Any, paths: Collection[str]) -> None:
    if not paths or table.count_rows() == 0:
        return  # a delete on an empty table would still make a new version
    for where in in_filters("path", paths):
        table.delete(where)
