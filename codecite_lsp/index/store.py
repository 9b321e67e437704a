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
import json
import os
import shutil
import threading
import time
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.fulltext import query_terms, search_terms
from ..core.records import Chunk

if TYPE_CHECKING:
    import pyarrow as pa

SCHEMA_VERSION = 2  # 2: chunks carry defines/uses (retrieval follows the code)
_IN_BATCH = 500  # literals per ``path IN (...)`` statement
_FTS_INDEX = "search_text_idx"
# Lance builds a full-text index with one worker per "compute" core, and by default it keeps two
# cores for I/O: on a 2-core machine that is one worker, and the index build (a second per 50 MB
# of code) runs serially at the end of a cold index. With every core counted, and a memory limit
# at which each worker writes its own partition, both cores build and write it (~30% faster;
# scores are the same: BM25 statistics span the partitions).
os.environ.setdefault("LANCE_CPU_THREADS", str(os.cpu_count() or 1))
_FTS_MEMORY_MB = 64
_OPEN_ATTEMPTS = 10  # x 0.1 s: how long a table being created elsewhere is waited for


def sql_literal(value: str) -> str:
    """A SQL string literal for a LanceDB filter: quotes doubled, nothing else is special."""
    return "'" + value.replace("'", "''") + "'"


def _in_filters(column: str, values: Iterable[str]) -> Iterator[str]:
    """``column IN (...)`` filters, a bounded number of literals each."""
    batch = sorted(set(values))
    for start in range(0, len(batch), _IN_BATCH):
        literals = ", ".join(sql_literal(v) for v in batch[start : start + _IN_BATCH])
        yield f"{column} IN ({literals})"


# ---------------------------------------------------------------------------------------------
# Rows


@dataclass(frozen=True, slots=True)
class FileRecord:
    """What the index knows about one file; written after its chunks (the commit marker)."""

    path: str
    revision: str
    size: int
    mtime_ns: int
    chunk_count: int
    language: str


@dataclass
class Meta:
    schema_version: int = SCHEMA_VERSION
    embedder: str | None = None
    dim: int | None = None
    chunk_budget: int | None = None  # the budget of the last complete index pass
    cold_budget: int | None = None  # the budget a first (cold) pass started writing with
    last_update: str | None = None  # ISO time of the last finished write
    optimized_version: int = 0  # chunks table version at the last optimize()


_CHUNK_COLUMNS = (
    "id",
    "path",
    "language",
    "start_line",
    "end_line",
    "start_byte",
    "end_byte",
    "symbol",
    "kind",
    "text",
    "content_hash",
    "revision",
    "defines",
    "uses",
)


def _schemas() -> tuple[pa.Schema, pa.Schema]:
    import pyarrow as pa

    chunks = pa.schema(
        [
            ("id", pa.string()),
            ("path", pa.string()),
            ("language", pa.string()),
            ("start_line", pa.int32()),
            ("end_line", pa.int32()),
            ("start_byte", pa.int64()),
            ("end_byte", pa.int64()),
            ("symbol", pa.string()),
            ("kind", pa.string()),
            ("text", pa.string()),
            ("content_hash", pa.string()),
            ("revision", pa.string()),
            # retrieval's: names a chunk defines / uses (Chunk.defines, Chunk.uses)
            ("defines", pa.list_(pa.string())),
            ("uses", pa.list_(pa.string())),
            # Read only when the full-text index is built: stored plain, which makes writing it
            # 5x cheaper (a third of a cold index's writing) for a fifth more disk.
            pa.field("search_text", pa.string(), metadata={"lance-encoding:compression": "none"}),
        ]
    )
    files = pa.schema(
        [
            ("path", pa.string()),
            ("revision", pa.string()),
            ("size", pa.int64()),
            ("mtime_ns", pa.int64()),
            ("chunk_count", pa.int32()),
            ("language", pa.string()),
        ]
    )
    return chunks, files


def _vector_schema(dim: int) -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            ("content_hash", pa.string()),
            ("embedder", pa.string()),
            ("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def _chunk_rows(chunks: list[Chunk], search_texts: list[str], schema: pa.Schema) -> pa.Table:
    import pyarrow as pa

    columns: dict[str, list[Any]] = {
        name: [getattr(c, name) for c in chunks] for name in _CHUNK_COLUMNS
    }
    columns["search_text"] = search_texts
    return pa.Table.from_pydict(columns, schema=schema)


def _chunk_from_row(row: Mapping[str, Any]) -> Chunk:
    return Chunk(
        path=row["path"],
        language=row["language"],
        start_line=row["start_line"],
        end_line=row["end_line"],
        start_byte=row["start_byte"],
        end_byte=row["end_byte"],
        symbol=row["symbol"],
        kind=row["kind"],
        text=row["text"],
        content_hash=row["content_hash"],
        revision=row["revision"],
        defines=tuple(row.get("defines") or ()),
        uses=tuple(row.get("uses") or ()),
    )


# ---------------------------------------------------------------------------------------------
# The store


class Store:
    """One index folder. Safe to share between threads; readers always see the latest commit."""

    def __init__(self, index_dir: Path, db: Any, chunks: Any, files: Any) -> None:
        self.index_dir = index_dir
        self._db = db
        self._chunks = chunks
        self._files = files
        self._chunk_schema = chunks.schema
        self._lock = threading.Lock()  # guards lazy creation of the FTS index / vectors table
        self._fts_ready = False

    @classmethod
    def open(cls, index_dir: Path) -> Store:
        os.environ.setdefault("RUST_LOG", "error")
        import lancedb

        index_dir.mkdir(parents=True, exist_ok=True)
        ignore = index_dir / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")  # the index never shows up in git status
        # Interval 0: every read sees writes made by other processes (a CLI run, the server).
        db = lancedb.connect(index_dir / "lance", read_consistency_interval=timedelta(0))
        meta = _read_meta(index_dir)
        if not (index_dir / "meta.json").exists():
            _write_meta(index_dir, meta)
        elif meta.schema_version != SCHEMA_VERSION:
            for name in db.list_tables().tables:  # another layout is rebuilt, not misread
                db.drop_table(name)
            _write_meta(index_dir, Meta())
        chunk_schema, file_schema = _schemas()
        chunks = _open_table(db, index_dir, "chunks", chunk_schema)
        files = _open_table(db, index_dir, "files", file_schema)
        return cls(index_dir, db, chunks, files)

    # -- meta ------------------------------------------------------------------------------

    @property
    def meta(self) -> Meta:
        return _read_meta(self.index_dir)

    def save_meta(self, meta: Meta) -> None:
        _write_meta(self.index_dir, meta)

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

    def chunks_for_path(self, path: str) -> list[Chunk]:
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

    # -- keyword search --------------------------------------------------------------------

    def unindexed_rows(self) -> int:
        """Chunk rows not yet folded into the full-text index (searched by brute force)."""
        if not self._fts_ready:
            return self.chunk_count()
        return int(self._chunks.index_stats(_FTS_INDEX).num_unindexed_rows)

    def ensure_fts(self) -> None:
        """Create the full-text index once; later rows are searchable before optimize().

        Building it over all rows at the end of a cold run is cheaper than creating it early
        and folding the rest in with optimize(); a query before that builds it on demand.
        """
        if self._fts_ready:
            return
        from lancedb.index import FTS

        with self._lock:
            if self._fts_ready:
                return
            if any(idx.name == _FTS_INDEX for idx in self._chunks.list_indices()):
                self._fts_ready = True
                return
            if self._chunks.count_rows() == 0:
                return
            config = FTS(
                base_tokenizer="whitespace",  # search_terms() already tokenised the text
                lower_case=False,
                stem=False,
                remove_stop_words=False,
                ascii_folding=False,
                max_token_length=None,
                memory_limit=_FTS_MEMORY_MB,
            )
            try:
                self._chunks.create_index(
                    "search_text", config=config, replace=False, name=_FTS_INDEX
                )
            except Exception:  # another process may have created it meanwhile
                if not any(i.name == _FTS_INDEX for i in self._chunks.list_indices()):
                    raise
            self._fts_ready = True

    def keyword_search(
        self, query: str, limit: int, paths: Collection[str] | None = None
    ) -> list[tuple[Chunk, float]]:
        """BM25 over search_text, best first; ``paths`` restricts the search to those files."""
        terms = query_terms(query)
        if not terms or limit <= 0 or (paths is not None and not paths):
            return []
        self.ensure_fts()
        if not self._fts_ready:
            return []  # nothing indexed yet
        search = self._chunks.search(terms, query_type="fts", fts_columns="search_text")
        if paths is not None:
            search = search.where(" OR ".join(_in_filters("path", paths)), prefilter=True)
        rows = search.limit(limit).to_arrow().to_pylist()
        return [(_chunk_from_row(row), float(row["_score"])) for row in rows]

    def naming(self, names: Collection[str], limit: int, column: str = "defines") -> list[Chunk]:
        """Chunks whose ``defines`` (or ``uses``) hold any of ``names`` (case-sensitive)."""
        wanted = sorted({n for n in names if n})[:_IN_BATCH]
        if not wanted or limit <= 0 or column not in ("defines", "uses"):
            return []
        literals = ", ".join(sql_literal(n) for n in wanted)
        query = self._chunks.search().where(f"array_has_any({column}, make_array({literals}))")
        return [_chunk_from_row(row) for row in query.limit(limit).to_arrow().to_pylist()]

    # -- vectors ---------------------------------------------------------------------------

    def _vectors_table(self) -> Any | None:
        return _open_table(self._db, self.index_dir, "vectors")

    def missing_vectors(self, embedder: str, limit: int) -> list[tuple[str, str]]:
        """(content_hash, text) of chunks that have no vector from ``embedder`` yet."""
        wanted = dict.fromkeys(_column(self._chunks, "content_hash"))
        vectors = self._vectors_table()
        if vectors is not None:
            for h in _column(vectors, "content_hash", f"embedder = {sql_literal(embedder)}"):
                wanted.pop(h, None)
        hashes = list(wanted)[:limit]
        texts: dict[str, str] = {}
        for where in _in_filters("content_hash", hashes):
            rows = self._chunks.search().where(where).select(["content_hash", "text"])
            for row in rows.limit(None).to_arrow().to_pylist():
                texts.setdefault(row["content_hash"], row["text"])
        return [(h, texts[h]) for h in hashes if h in texts]

    def put_vectors(self, embedder: str, hashes: list[str], vectors: np.ndarray) -> None:
        """Store one vector per content hash; an existing (hash, embedder) pair is kept."""
        import pyarrow as pa

        if len(hashes) != len(vectors):
            raise ValueError(f"{len(hashes)} hashes but {len(vectors)} vectors")
        if not hashes:
            return
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        dim = int(matrix.shape[1])
        with self._lock:
            table = self._vectors_table()
            if table is not None and table.schema.field("vector").type.list_size != dim:
                self._db.drop_table("vectors")  # another embedder's width: those are useless now
                table = None
            if table is None:
                table = _open_table(self._db, self.index_dir, "vectors", _vector_schema(dim))
            meta = self.meta
            if (meta.embedder, meta.dim) != (embedder, dim):
                meta.embedder, meta.dim = embedder, dim
                self.save_meta(meta)
        unique = {h: i for i, h in enumerate(hashes)}  # one row per hash
        flat = pa.array(matrix[list(unique.values())].reshape(-1), type=pa.float32())
        rows = pa.Table.from_arrays(
            [
                pa.array(list(unique), type=pa.string()),
                pa.array([embedder] * len(unique), type=pa.string()),
                pa.FixedSizeListArray.from_arrays(flat, dim),
            ],
            schema=table.schema,
        )
        table.merge_insert(["content_hash", "embedder"]).when_not_matched_insert_all().execute(rows)

    def vector_count(self, embedder: str) -> int:
        table = self._vectors_table()
        return 0 if table is None else int(table.count_rows(f"embedder = {sql_literal(embedder)}"))

    def vector_search(
        self, embedder: str, vector: np.ndarray, limit: int
    ) -> list[tuple[Chunk, float]]:
        """Chunks whose vector is nearest ``vector``, best first, scored by cosine similarity."""
        table = self._vectors_table()
        if table is None or limit <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != table.schema.field("vector").type.list_size:
            return []
        hits = (
            table.search(query, vector_column_name="vector")
            .distance_type("cosine")
            .where(f"embedder = {sql_literal(embedder)}", prefilter=True)
            .select(["content_hash", "_distance"])
            .limit(limit)
            .to_arrow()
            .to_pylist()
        )
        similarity = {h["content_hash"]: 1.0 - float(h["_distance"]) for h in hits}
        found: list[tuple[Chunk, float]] = []
        for where in _in_filters("content_hash", similarity):
            for row in self._chunks.search().where(where).limit(None).to_arrow().to_pylist():
                found.append((_chunk_from_row(row), similarity[row["content_hash"]]))
        found.sort(key=lambda pair: (-pair[1], pair[0].path, pair[0].start_line))
        return found[:limit]

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


def _open_table(db: Any, index_dir: Path, name: str, schema: pa.Schema | None = None) -> Any:
    """The table; if it does not exist yet, None, or a new empty one when ``schema`` is given.

    A kill while a table was being created leaves a folder with no committed version; it
    holds nothing, so it is removed and the table counts as missing.
    """
    folder = index_dir / "lance" / f"{name}.lance"
    for attempt in range(_OPEN_ATTEMPTS):
        if not folder.exists():
            break
        try:
            return db.open_table(name)
        except ValueError:
            versions = folder / "_versions"
            if versions.exists() and any(p.suffix == ".manifest" for p in versions.iterdir()):
                raise  # a committed table we cannot read: not ours to delete
            if attempt < _OPEN_ATTEMPTS - 1:
                time.sleep(0.1)  # another process may be creating it this very moment
            else:
                shutil.rmtree(folder, ignore_errors=True)
    return None if schema is None else db.create_table(name, schema=schema, exist_ok=True)


def _column(table: Any, name: str, where: str | None = None) -> list[Any]:
    """One column of a table (optionally filtered), read without the other columns."""
    query = table.search()
    if where is not None:
        query = query.where(where)
    values: list[Any] = query.select([name]).limit(None).to_arrow()[name].to_pylist()
    return values


def _read_meta(index_dir: Path) -> Meta:
    try:
        raw = json.loads((index_dir / "meta.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Meta()
    except (OSError, ValueError):
        return Meta(schema_version=-1)  # unreadable: rebuild rather than trust it
    if not isinstance(raw, dict):
        return Meta(schema_version=-1)
    known = {k: v for k, v in raw.items() if k in Meta.__dataclass_fields__}
    try:
        return Meta(**known)
    except TypeError:
        return Meta(schema_version=-1)


def _write_meta(index_dir: Path, meta: Meta) -> None:
    """Write atomically (temp file + rename): a crash never leaves half a meta.json."""
    target = index_dir / "meta.json"
    text = json.dumps(asdict(meta), indent=2)
    with contextlib.suppress(OSError):
        if target.read_text(encoding="utf-8") == text:
            return  # an unchanged index stays byte-for-byte unchanged
    temp = target.with_suffix(f".tmp{os.getpid()}.{threading.get_ident()}")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, target)
