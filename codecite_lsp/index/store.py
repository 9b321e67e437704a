"""The on-disk index of one repository: a LanceDB folder and a small ``meta.json``, held by
:class:`Store` as parts that each own their state:

- :class:`~.chunks.ChunkTables`: the ``chunks`` and ``files`` tables (a file's row is the commit
  marker of its chunks);
- :class:`~.keyword.KeywordIndex`: the full-text index over the chunks;
- :class:`~.vectors.Vectors`: the ``vectors`` table, keyed by chunk content, not by chunk id;
- :class:`~.meta.MetaFile`: ``meta.json`` (layout version, embedder, counts at the last pass).

The Store opens them together, answers for the parts' methods under the names its callers know,
and does what spans parts (versions, damage probes, optimize, reset).

lancedb is imported inside :meth:`Store.open` because importing it costs seconds.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import shutil
import threading
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from ..core.environment import apply_defaults
from ..core.records import Chunk
from ..core.references import References
from .chunks import ChunkTables
from .damage import clear_misplaced
from .keyword import KeywordIndex
from .lance_import import import_lancedb
from .meta import SCHEMA_VERSION, Meta, MetaFile
from .tables import FileRecord, IndexDamaged, open_or_rebuild, sql_literal, table_schemas
from .vectors import Vectors
from .view import IndexView, forget_view, shared_view

__all__ = ["SCHEMA_VERSION", "FileRecord", "IndexDamaged", "Meta", "Store", "sql_literal"]

log = logging.getLogger(__name__)


@functools.cache
def _session() -> Any:
    """One LanceDB session (its index and metadata caches) for every index this process opens:
    the server reads an index and its indexer writes it through two connections, and each of
    its own would load the same full-text index again (~300 MB at a million chunks)."""
    return import_lancedb().Session()


_OPENING: dict[Path, threading.Lock] = {}
_OPENING_GUARD = threading.Lock()


def _opening(index_dir: Path) -> threading.Lock:
    """The lock of one index folder's opening in this process: two threads opening a folder
    that has no tables yet (the server's reader and its indexer, at start) each created them,
    and one took the other's half-made table for damage and removed it."""
    with _OPENING_GUARD:
        return _OPENING.setdefault(index_dir.resolve(), threading.Lock())


class Store:
    """One index folder. Safe to share between threads; readers always see the latest commit."""

    def __init__(
        self,
        index_dir: Path,
        db: Any,
        chunks: Any,
        files: Any,
        in_memory: bool = False,
        tree: Path | None = None,
        fixed: bool = False,
    ) -> None:
        self.index_dir = index_dir
        self._db = db
        self._tree = tree
        # Queries answered from memory (:mod:`.view`): for a process that serves many (the
        # server); a one-shot command reads LanceDB directly rather than load every row. The
        # view reads chunk texts back from ``tree``, the working tree they were cut from.
        self.view: IndexView | None = (
            shared_view(index_dir, chunks, tree, fixed) if in_memory else None
        )
        self.meta_file = MetaFile(index_dir)
        self.tables = ChunkTables(index_dir, chunks, files, self.view.chunks if self.view else None)
        self.keyword = KeywordIndex(index_dir, self.tables)
        vectors_view = self.view.vectors if self.view else None
        self.vectors = Vectors(index_dir, db, self.tables, self.meta_file, vectors_view, fixed)

    @classmethod
    def open(
        cls, index_dir: Path, in_memory: bool = False, tree: Path | None = None, fixed: bool = False
    ) -> Store:
        """``fixed``: a folder nobody writes (a shared base's copy), whose reads need not ask
        the disk for a newer version first, nor open a table again."""
        apply_defaults()
        lancedb = import_lancedb()  # lazy: it takes seconds (the least possible, see there)
        with _opening(index_dir):  # the tables only: a server's view loads after, unlocked
            db, chunks, files = cls._tables(lancedb, index_dir, fixed)
        return cls(index_dir, db, chunks, files, in_memory, tree, fixed)

    @staticmethod
    def _tables(lancedb: Any, index_dir: Path, fixed: bool) -> tuple[Any, Any, Any]:
        """The folder's connection and its chunk and file tables, made if missing."""
        index_dir.mkdir(parents=True, exist_ok=True)
        clear_misplaced(index_dir)
        ignore = index_dir / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")  # the index never shows up in git status
        # Interval 0: every read sees writes made by other processes (a CLI run, the server).
        interval = None if fixed else timedelta(0)
        lance_dir = index_dir / "lance"
        db = lancedb.connect(lance_dir, read_consistency_interval=interval, session=_session())
        meta_file = MetaFile(index_dir)
        meta = meta_file.read()
        if not meta_file.exists():
            meta_file.save(meta)
        elif not meta.current:
            if meta.schema_version == -1:
                log.warning("the index's meta.json in %s was damaged; rebuilding it", index_dir)
            for name in db.list_tables().tables:  # another layout is rebuilt, not misread
                db.drop_table(name)
            meta_file.save(Meta())
        chunk_schema, file_schema = table_schemas()
        chunks = open_or_rebuild(db, index_dir, "chunks", chunk_schema)
        files = open_or_rebuild(db, index_dir, "files", file_schema)
        return db, chunks, files

    def reset(self) -> Store:
        """Drop every table and start an empty index (meta too): for damage found in the
        chunk or file rows themselves, which only reading the files again can repair."""
        for name in ("chunks", "files", "vectors"):
            with contextlib.suppress(Exception):
                self._db.drop_table(name)
            shutil.rmtree(self.index_dir / "lance" / f"{name}.lance", ignore_errors=True)
        self.meta_file.save(Meta())
        # The indexer's "every chunk had a vector" of the old tables (index/filling.py).
        (self.index_dir / "vectors-whole.json").unlink(missing_ok=True)
        forget_view(self.index_dir)
        return Store.open(self.index_dir, in_memory=self.view is not None, tree=self._tree)

    # -- what spans the parts --------------------------------------------------------------

    @property
    def meta(self) -> Meta:
        return self.meta_file.read()

    def save_meta(self, meta: Meta) -> None:
        self.meta_file.save(meta)

    def versions(self) -> dict[str, int]:
        """Table versions: every write makes a new one (so "nothing written" can be checked)."""
        result = self.tables.versions()
        vectors = self.vectors.version()
        if vectors is not None:
            result["vectors"] = vectors
        return result

    def chunks_version(self) -> int:
        """``versions()["chunks"]`` alone: a search reads it (the vectors' version opens that
        table, ~1 ms)."""
        return int(self.tables.chunks.version)

    def probe(self, whole: bool = True) -> None:
        """One keyword and one vector query, as a search makes them: a damaged full-text index
        or vectors table is rebuilt (vectors: dropped, for the indexer to fill again); what
        cannot be rebuilt raises IndexDamaged. ``whole`` also reads every vector's hash (a
        truncated data file past the first row): a full pass does; a saved file's update
        does not (~50 ms on 30k chunks), its filtered read of the vectors reads that column."""
        words = self.tables.first_words()
        if words:
            self.keyword.search(words[0], 1)
        self.vectors.probe(whole)

    def optimize(self) -> None:
        """Compact fragments, fold new rows into the indexes, drop unreferenced vectors.

        Costs seconds to minutes on a large index: never call it on a request's path.
        """
        keep = timedelta(minutes=5)  # readers that opened an older version can finish
        version = self.tables.optimize(keep)
        self.vectors.optimize(keep)
        meta = self.meta
        meta.optimized_version = version
        self.save_meta(meta)

    # -- the parts' methods, under the names callers know ---------------------------------

    def pinned(self) -> contextlib.AbstractContextManager[None]:
        return self.tables.pinned()

    def wait_for_view(self) -> None:
        self.tables.wait_for_view()

    def files(self, paths: Collection[str] | None = None) -> dict[str, FileRecord]:
        return self.tables.files(paths)

    def paths_under(self, folder: str) -> list[str]:
        return self.tables.paths_under(folder)

    def file_count(self) -> int:
        return self.tables.file_count()

    def chunk_count(self) -> int:
        return self.tables.chunk_count()

    def chunk_counts(self) -> Counter[str]:
        return self.tables.chunk_counts()

    def chunk_revisions(self, paths: Collection[str]) -> dict[str, Counter[str]]:
        return self.tables.chunk_revisions(paths)

    def references(self) -> References:
        return self.tables.references()

    def adjacent(self, spans: Collection[tuple[str, int, int]]) -> list[Chunk]:
        return self.tables.adjacent(spans)

    def chunks_for_path(self, path: str) -> list[Chunk]:
        return self.tables.chunks_for_path(path)

    def naming(self, names: Collection[str], limit: int, column: str = "defines") -> list[Chunk]:
        return self.tables.naming(names, limit, column)

    def with_hashes(self, hashes: Collection[str]) -> list[Chunk]:
        return self.tables.with_hashes(hashes)

    def replace(
        self,
        chunks_by_path: Mapping[str, list[Chunk]],
        records: list[FileRecord],
        search_texts: Mapping[str, list[str]] | None = None,
    ) -> None:
        self.tables.replace(chunks_by_path, records, search_texts)

    def delete(self, paths: Iterable[str]) -> None:
        self.tables.delete(paths)

    def remove_orphans(self) -> int:
        return self.tables.remove_orphans()

    def ensure_fts(self) -> None:
        self.keyword.ensure()

    def unindexed_rows(self) -> int:
        return self.keyword.unindexed_rows()

    def keyword_search(
        self, query: str, limit: int, paths: Collection[str] | None = None
    ) -> list[tuple[Chunk, float]]:
        return self.keyword.search(query, limit, paths)

    @property
    def vector_drops(self) -> int:
        return self.vectors.drops

    def missing_vectors(
        self, embedder: str, limit: int, among: Collection[str] | None = None
    ) -> list[tuple[str, str]]:
        return self.vectors.missing(embedder, limit, among)

    def lacking_vectors(self, embedder: str, size: int) -> Iterator[list[tuple[str, str]]]:
        return self.vectors.lacking(embedder, size)

    def put_vectors(self, embedder: str, hashes: list[str], vectors: np.ndarray) -> None:
        self.vectors.put(embedder, hashes, vectors)

    def vector_count(self, embedder: str | None) -> int:
        return self.vectors.count(embedder)

    def vector_coverage(self, embedder: str) -> tuple[int, int]:
        return self.vectors.coverage(embedder)

    def vector_search(
        self, embedder: str, vector: np.ndarray, limit: int
    ) -> list[tuple[Chunk, float]]:
        return self.vectors.search(embedder, vector, limit)
