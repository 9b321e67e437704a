"""The on-disk index: LanceDB tables ``chunks``, ``files``, ``vectors`` and a small ``meta.json``.

- ``chunks``: one row per chunk, with ``search_text`` (built by :func:`.fulltext.search_terms`)
  carrying a whitespace-tokenised full-text index.
- ``files``: one row per indexed file. A file's row is written *after* its chunks, so it is
  the commit marker the indexer's crash recovery relies on.
- ``vectors``: keyed by chunk ``content_hash`` (+ embedder name), never by chunk id, so a
  re-chunk or a rename re-uses vectors and the chunks table is never rewritten when they arrive.

lancedb is imported inside :meth:`Store.open` because importing it costs seconds.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..core.environment import apply_defaults
from ..core.fulltext import search_terms
from ..core.records import Chunk
from .damage import clear_misplaced
from .keyword import KeywordMixin
from .lance_import import import_lancedb
from .tables import (
    SCHEMA_VERSION,
    FileRecord,
    IndexDamaged,
    Meta,
    _chunk_from_row,
    _chunk_rows,
    _column,
    _in_filters,
    _open_or_rebuild,
    _schemas,
    read_meta,
    sql_literal,
    write_meta,
)
from .vectors import VectorsMixin
from .view import IndexView, forget_view, shared_view

__all__ = ["FileRecord", "IndexDamaged", "Meta", "Store", "sql_literal"]

log = logging.getLogger(__name__)
_NAMES_MAX = 500  # names per definitions look-up (retrieval's)


# ---------------------------------------------------------------------------------------------
# The store


class Store(KeywordMixin, VectorsMixin):
    """One index folder. Safe to share between threads; readers always see the latest commit."""

    def __init__(
        self, index_dir: Path, db: Any, chunks: Any, files: Any, in_memory: bool = False
    ) -> None:
        self.index_dir = index_dir
        self._db = db
        self._chunks = chunks
        self._files = files
        self._chunk_schema = chunks.schema
        self._lock = threading.Lock()  # guards lazy creation of the FTS index / vectors table
        self._fts_ready = False
        self.vector_drops = 0  # vectors tables dropped as damaged by this Store (see vectors.py)
        # Queries answered from memory (:mod:`.view`): for a process that serves many (the
        # server); a one-shot command reads LanceDB directly rather than load every row.
        self._view: IndexView | None = shared_view(index_dir, chunks) if in_memory else None

    def pinned(self) -> contextlib.AbstractContextManager[None]:
        """Within: the in-memory view checks the table's version once (a request's reads)."""
        return self._view.chunks.pinned() if self._view is not None else contextlib.nullcontext()

    def wait_for_view(self) -> None:
        """Until the in-memory view has loaded (its loading starts with the store)."""
        if self._view is not None:
            self._view.chunks.load(wait=True)

    @classmethod
    def open(cls, index_dir: Path, in_memory: bool = False) -> Store:
        apply_defaults()
        lancedb = import_lancedb()  # lazy: it takes seconds (the least possible, see there)

        index_dir.mkdir(parents=True, exist_ok=True)
        clear_misplaced(index_dir)
        ignore = index_dir / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")  # the index never shows up in git status
        # Interval 0: every read sees writes made by other processes (a CLI run, the server).
        db = lancedb.connect(index_dir / "lance", read_consistency_interval=timedelta(0))
        meta = read_meta(index_dir)
        if not (index_dir / "meta.json").exists():
            write_meta(index_dir, meta)
        elif meta.schema_version != SCHEMA_VERSION:
            if meta.schema_version == -1:
                log.warning("the index's meta.json in %s was damaged; rebuilding it", index_dir)
            for name in db.list_tables().tables:  # another layout is rebuilt, not misread
                db.drop_table(name)
            write_meta(index_dir, Meta())
        chunk_schema, file_schema = _schemas()
        chunks = _open_or_rebuild(db, index_dir, "chunks", chunk_schema)
        files = _open_or_rebuild(db, index_dir, "files", file_schema)
        return cls(index_dir, db, chunks, files, in_memory)

    def reset(self) -> Store:
        """Drop every table and start an empty index (meta too): for damage found in the
        chunk or file rows themselves, which only reading the files again can repair."""
        for name in ("chunks", "files", "vectors"):
            with contextlib.suppress(Exception):
                self._db.drop_table(name)
            shutil.rmtree(self.index_dir / "lance" / f"{name}.lance", ignore_errors=True)
        write_meta(self.index_dir, Meta())
        # The indexer's "every chunk had a vector" of the old tables (index/filling.py).
        (self.index_dir / "vectors-whole.json").unlink(missing_ok=True)
        forget_view(self.index_dir)
        return Store.open(self.index_dir, in_memory=self._view is not None)

    # -- meta ------------------------------------------------------------------------------

    @property
    def meta(self) -> Meta:
        return read_meta(self.index_dir)

    def save_meta(self, meta: Meta) -> None:
        write_meta(self.index_dir, meta)

    def versions(self) -> dict[str, int]:
        """Table versions: every write makes a new one (so "nothing written" can be checked)."""
        result = {"chunks": self._chunks.version, "files": self._files.version}
        vectors = self._vectors_table()
        if vectors is not None:
            result["vectors"] = vectors.version
        return result

    # -- files and chunks ------------------------------------------------------------------

    def files(self) -> dict[str, FileRecord]:
        rows = self._files.search().limit(None).to_arrow().to_pylist()
        return {row["path"]: FileRecord(**row) for row in rows}

    def file_count(self) -> int:
        return int(self._files.count_rows())

    def chunk_count(self) -> int:
        return int(self._chunks.count_rows())

    def chunk_counts(self) -> Counter[str]:
        """Chunk rows per path (reads the path column only)."""
        return Counter(_column(self._chunks, "path"))

    def chunk_revisions(self, paths: Collection[str]) -> dict[str, Counter[str]]:
        """For each path: how many chunk rows carry each file revision."""
        result: dict[str, Counter[str]] = {}
        for where in _in_filters("path", paths):
            rows = self._chunks.search().where(where).select(["path", "revision"]).limit(None)
            for row in rows.to_arrow().to_pylist():
                result.setdefault(row["path"], Counter())[row["revision"]] += 1
        return result

    def references(self) -> list[tuple[str, list[str], list[str]]]:
        """(path, defines, uses) of every chunk: the reference graph's rows (no texts read)."""
        found = self._view.chunks.references() if self._view is not None else None
        if found is not None:
            return found
        query = self._chunks.search().select(["path", "defines", "uses"]).limit(None)
        table = query.to_arrow()
        columns = [table[name].to_pylist() for name in ("path", "defines", "uses")]
        return [
            (path, defines or [], uses or []) for path, defines, uses in zip(*columns, strict=True)
        ]

    def adjacent(self, spans: Collection[tuple[str, int, int]]) -> list[Chunk]:
        """The chunks right above and right below each (path, start_line, end_line) span (a
        file's chunks cover its lines exactly once): one read, whatever the number of spans."""
        if not spans:
            return []
        found = self._view.chunks.adjacent(spans) if self._view is not None else None
        if found is not None:
            return found
        where = " OR ".join(
            f"(path = {sql_literal(path)} AND (end_line = {int(start) - 1}"
            f" OR start_line = {int(end) + 1}))"
            for path, start, end in sorted(set(spans))
        )
        rows = self._chunks.search().where(where).limit(None).to_arrow().to_pylist()
        return [_chunk_from_row(row) for row in rows]

    def chunks_for_path(self, path: str) -> list[Chunk]:
        found = self._view.chunks.for_path(path) if self._view is not None else None
        if found is not None:
            return found
        query = self._chunks.search().where(f"path = {sql_literal(path)}").limit(None)
        chunks = [_chunk_from_row(row) for row in query.to_arrow().to_pylist()]
        return sorted(chunks, key=lambda c: c.start_line)

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
        self._delete_rows(self._chunks, set(chunks_by_path))
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
            self._chunks.add(_chunk_rows(new_chunks, texts, self._chunk_schema))
        if records:
            self._upsert_files(records)

    def delete(self, paths: Iterable[str]) -> None:
        """Forget these files: file rows first (uncommit), then their chunks."""
        targets = set(paths)
        if not targets:
            return
        self._delete_rows(self._files, targets)
        self._delete_rows(self._chunks, targets)

    def remove_orphans(self) -> int:
        """Delete chunk rows whose path has no file row (left by a crash); returns how many."""
        known = set(self.files())
        orphans = {p: n for p, n in self.chunk_counts().items() if p not in known}
        self._delete_rows(self._chunks, orphans)
        return sum(orphans.values())

    def _delete_rows(self, table: Any, paths: Collection[str]) -> None:
        if not paths or table.count_rows() == 0:
            return  # a delete on an empty table would still make a new version
        for where in _in_filters("path", paths):
            table.delete(where)

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

    # -- look-ups by name and damage checks -------------------------------------------

    def naming(self, names: Collection[str], limit: int, column: str = "defines") -> list[Chunk]:
        """Chunks whose ``defines`` (or ``uses``) hold any of ``names`` (case-sensitive)."""
        wanted = sorted({n for n in names if n})[:_NAMES_MAX]
        if not wanted or limit <= 0 or column not in ("defines", "uses"):
            return []
        found = self._view.chunks.naming(wanted, limit, column) if self._view else None
        if found is not None:
            return found
        literals = ", ".join(sql_literal(n) for n in wanted)
        query = self._chunks.search().where(f"array_has_any({column}, make_array({literals}))")
        return [_chunk_from_row(row) for row in query.limit(limit).to_arrow().to_pylist()]

    def probe(self, whole: bool = True) -> None:
        """One keyword and one vector query, as a search makes them: a damaged full-text index
        or vectors table is rebuilt (vectors: dropped, for the indexer to fill again); what
        cannot be rebuilt raises IndexDamaged. ``whole`` also reads every vector's hash (a
        truncated data file past the first row): a full pass does; a saved file's update
        does not (~50 ms on 30k chunks), its filtered read of the vectors reads that column."""
        sample = self._chunks.search().select(["search_text"]).limit(1).to_arrow()
        words = sample["search_text"].to_pylist()[0].split() if sample.num_rows else []
        if words:
            self.keyword_search(words[0], 1)
        vectors = self._vectors_table()
        if vectors is not None:
            try:
                vectors.search().select(["content_hash"]).limit(1).to_arrow()
                if whole:
                    _column(vectors, "content_hash")
            except Exception as exc:
                self._drop_vectors(exc)

    # -- maintenance -----------------------------------------------------------------------

    def optimize(self) -> None:
        """Compact fragments, fold new rows into the indexes, drop unreferenced vectors.

        Costs seconds to minutes on a large index: never call it on a request's path.
        """
        keep = timedelta(minutes=5)  # readers that opened an older version can finish
        self._chunks.optimize(cleanup_older_than=keep)
        self._files.optimize(cleanup_older_than=keep)
        vectors = self._vectors_table()
        if vectors is not None:
            dead = set(_column(vectors, "content_hash")) - set(
                _column(self._chunks, "content_hash")
            )
            for where in _in_filters("content_hash", dead):
                vectors.delete(where)
            vectors.optimize(cleanup_older_than=keep)
        meta = self.meta
        meta.optimized_version = self._chunks.version
        self.save_meta(meta)
