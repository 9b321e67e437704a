"""In-memory views of the index for the query path: the chunk rows (by id, path, content hash,
defined and used names) and one embedder's vectors as a normalised float32 matrix.

A search makes several LanceDB reads (full text, vectors, the chunks behind the vectors, the
definitions a query names, a file's chunks); each filtered read scans a column of every row, and
a brute-force vector query reads every vector from disk on every search (docs/benchmarks.md:
`bench/bench_search.py`). These views answer the same reads from memory.

They follow the tables: before each use the table's version is compared (a fraction of a
millisecond); when another writer (the indexer, another process) made a new one, only the key
column is read again and the rows that appeared are fetched. A write this process made (the
server's own indexer: saves, the watcher) is told to the view instead (:func:`written_chunks`,
:func:`written_vectors`): the view applies it without reading the table, so a saved file costs
its own rows, not a read of every key and vector (which grows with the repository). Rows keep
the table's scan order, so a limited look-up returns the rows a LanceDB scan with the same
filter and limit would.
"""

from __future__ import annotations

import logging
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core.memory import release
from ..core.records import Chunk
from ..core.references import References
from .rows import Columns, Delta
from .tables import CHUNK_COLUMNS, IN_BATCH, findings_of, in_filters, sql_literal
from .texts import ChunkTexts, Wanted

log = logging.getLogger(__name__)


def _chunks_from_table(table: Any) -> list[Chunk]:
    """Chunks of an Arrow table (column-wise: several times faster than row dictionaries)."""
    columns = [table[name].to_pylist() for name in CHUNK_COLUMNS]
    intern = sys.intern  # the same names recur in thousands of chunks
    return [
        Chunk(
            path=path,
            language=language,
            start_line=start_line,
            end_line=end_line,
            start_byte=start_byte,
            end_byte=end_byte,
            symbol=symbol,
            kind=kind,
            text=text,
            content_hash=content_hash,
            revision=revision,
            defines=tuple(intern(n) for n in defines or ()),
            uses=tuple(intern(n) for n in uses or ()),
            untrusted=findings_of(untrusted),
        )
        for (
            _,
            path,
            language,
            start_line,
            end_line,
            start_byte,
            end_byte,
            symbol,
            kind,
            text,
            content_hash,
            revision,
            defines,
            uses,
            untrusted,
        ) in zip(*columns, strict=True)
    ]


_HELD_COLUMNS = [name for name in CHUNK_COLUMNS if name != "text"]
# Rows appended since the whole read (saves, a checkout's pass) beyond which the table is read
# again: appended rows are held as whole chunks, at several times a column row's memory.
DELTA_MAX = 20_000

# Chunks kept made (~3 KB each with the text): a repository of up to this many chunks has every
# chunk made once, as when the view held them all; a larger one keeps its most recent.
CHUNKS_KEPT = 32_768

# A row the view returns: a row of the columns (its text read back), or a whole chunk.
_Item = int | Chunk


@dataclass
class _Rows:
    """The chunk rows at one table version: a whole read (columns) and the rows since, and the
    chunks last made of rows of the columns (``made``: a request asks for the same chunks
    several times, and a small repository's every chunk stays made)."""

    version: int
    columns: Columns
    delta: Delta
    made: OrderedDict[int, Chunk] = field(default_factory=OrderedDict)

    def kill(self, rows: np.ndarray) -> None:
        self.columns.kill(rows)
        for row in rows.tolist():
            self.made.pop(row, None)

    def append(self, chunk: Chunk) -> None:
        """A row appended (LanceDB keeps both rows of an id written twice; the last counts)."""
        key = chunk.id
        held = self.columns.rows_of_ids([key])
        self.kill(held[held >= 0])
        self.delta.add(key, chunk)

    def ordered(
        self, rows: Iterable[int], keys: Iterable[str], limit: int | None = None
    ) -> list[_Item]:
        """Rows of the columns and of the delta, in scan order (the first ``limit``)."""
        position = self.columns.position
        held = np.asarray(rows if isinstance(rows, np.ndarray) else list(rows), dtype=np.int64)
        # a common name (`get`) is used by tens of thousands of rows: ordered by numpy, and
        # only the first ``limit`` of them can be among the first ``limit`` in all
        held = held[np.argsort(position[held], kind="stable")][:limit]
        items: list[tuple[int, _Item]] = [(int(position[r]), int(r)) for r in held]
        items += [(self.delta.position[k], self.delta.by_id[k]) for k in keys]
        items.sort(key=lambda item: item[0])
        return [item for _, item in items][:limit]


class ChunkView:
    """The chunks table in memory, without the texts (:mod:`.rows`; texts are read back by
    :mod:`.texts`). Loaded by a background thread (seconds on a large index); until then, and
    while a large change is read again, every method returns None and the store asks LanceDB.
    Once loaded, each call first brings it to the table's latest version."""

    def __init__(self, table: Any, tree: Path | None, fixed: bool = False) -> None:
        self._table = table
        self._fixed = fixed  # a table nobody writes: loaded once, its version never asked again
        self._texts = ChunkTexts(table, tree)
        self._rows: _Rows | None = None
        self._lock = threading.Lock()
        self._loader: threading.Thread | None = None
        self._pins = threading.local()  # per thread: depth of pinned(), version checked in it

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Within: the table's version is checked once (each check costs 1-5 ms): one search
        or question reads one version of the index."""
        depth = getattr(self._pins, "depth", 0)
        if depth == 0:
            self._pins.checked = False
        self._pins.depth = depth + 1
        try:
            yield
        finally:
            self._pins.depth = depth

    def load(self, wait: bool = False) -> None:
        """Start loading the rows in the background (once); ``wait``: until they are loaded."""
        with self._lock:
            if self._rows is None and self._loader is None:
                self._loader = threading.Thread(target=self._load, name="index-view", daemon=True)
                self._loader.start()
            loader = self._loader
        if wait and loader is not None:
            loader.join()

    def _load(self) -> None:
        try:
            version = self._table.version
            query = self._table.search().select(_HELD_COLUMNS).with_row_id(True)
            found = query.limit(None).to_arrow()
            columns = Columns.of(found)
            del found
            release()  # Arrow's pool and the heap keep the read
            rows = _Rows(version, columns, Delta(next_position=len(columns)))
            if len(columns) <= CHUNKS_KEPT:  # a small index: every chunk made before any use
                self._chunks(rows, range(len(columns)))
            with self._lock:
                # rows written since the version was read: the next sync
                self._rows = rows
        except Exception as exc:  # the folder removed or damaged: LanceDB answers (and reports)
            log.debug("the in-memory view of the index was not loaded: %s", exc)
        finally:
            with self._lock:
                self._loader = None

    @property
    def ready(self) -> bool:
        return self._rows is not None

    def _sync(self) -> _Rows | None:
        rows = self._rows
        if rows is None:
            return None
        pinned = getattr(self._pins, "depth", 0) > 0
        if self._fixed or (pinned and self._pins.checked):
            return rows
        self._pins.checked = pinned
        version = self._table.version
        if version == rows.version:
            return rows
        rows.made.clear()  # another writer: a row kept may now carry another revision
        read = self._table.search().select(["id"]).with_row_id(True).limit(None).to_arrow()
        order: list[str] = read["id"].to_pylist()
        in_columns = rows.columns.reposition(order, read["_rowid"].to_numpy())
        delta = rows.delta
        current = set(order)
        for key in [k for k in delta.by_id if k not in current]:
            delta.remove(key)
        missing = [k for k, hit in zip(order, in_columns, strict=True) if not hit]
        fetch = [k for k in missing if k not in delta.by_id]
        if len(fetch) > IN_BATCH or len(delta) + len(fetch) > DELTA_MAX:
            self._rows = None  # a large pass: read it all again, in the background
            return None
        for where in in_filters("id", fetch):
            query = self._table.search().where(where).select(list(CHUNK_COLUMNS))
            found = query.limit(None).to_arrow()
            for key, chunk in zip(found["id"].to_pylist(), _chunks_from_table(found), strict=True):
                delta.add(key, chunk)
        # a row written after the id column was read waits for the next version check
        for position, (key, hit) in enumerate(zip(order, in_columns, strict=True)):
            if not hit and key in delta.by_id:
                delta.position[key] = position
        delta.next_position = len(order)
        rows.version = version
        return rows

    def written(
        self, before: int, after: int, removed: Collection[str], added: Sequence[Chunk]
    ) -> None:
        """This process changed the table from version ``before`` to ``after`` (under the index's
        write lock, so nobody else did): the rows of the paths ``removed`` deleted, then ``added``
        appended. Applied when the view holds ``before``; otherwise its next use reads the
        table, as for another process's write."""
        with self._lock:
            rows = self._rows
            if rows is None or rows.version != before:
                return
            for path in removed:
                rows.kill(rows.columns.rows_of_path(path))
                for key in list(rows.delta.by_path.get(path, ())):
                    rows.delta.remove(key)
            for chunk in added:
                rows.append(chunk)
            rows.version = after
            if len(rows.delta) > DELTA_MAX:
                self._rows = None  # read again at the next use

    def _read(self, answer: Callable[[_Rows], Any]) -> Any:
        with self._lock:
            rows = self._sync()
            found = None if rows is None else answer(rows)
        if rows is None:
            self.load()
        return found

    def _chunks(self, rows: _Rows, items: Sequence[_Item | None]) -> list[Chunk | None]:
        """The chunks of ``items``, texts read back for the rows of the columns not made yet
        (None: a row whose text is gone, deleted meanwhile)."""
        columns, made = rows.columns, rows.made
        wanted = list(dict.fromkeys(i for i in items if isinstance(i, int) and i not in made))
        texts = self._texts.read(
            [
                Wanted(
                    columns.key(row),
                    columns.path(row),
                    *columns.span(row),
                    columns.content_hash(row),
                    int(columns.row_ids[row]),
                )
                for row in wanted
            ]
        )
        kept = [(row, text) for row, text in zip(wanted, texts, strict=True) if text is not None]
        made.update(
            zip(
                (row for row, _ in kept),
                columns.chunks([row for row, _ in kept], [text for _, text in kept]),
                strict=True,
            )
        )
        found = [made.get(item) if isinstance(item, int) else item for item in items]
        for item in items:
            if isinstance(item, int) and item in made:
                made.move_to_end(item)
        while len(made) > CHUNKS_KEPT:
            made.popitem(last=False)
        return found

    def _found(self, rows: _Rows, items: Sequence[_Item]) -> list[Chunk]:
        return [chunk for chunk in self._chunks(rows, items) if chunk is not None]

    def by_ids(self, ids: Iterable[str]) -> list[Chunk | None] | None:
        wanted = list(ids)

        def answer(rows: _Rows) -> list[Chunk | None]:
            at = rows.columns.rows_of_ids(wanted)
            items: list[_Item | None] = [
                rows.delta.by_id.get(key) or (int(row) if row >= 0 else None)
                for key, row in zip(wanted, at, strict=True)
            ]
            return self._chunks(rows, items)

        found: list[Chunk | None] | None = self._read(answer)
        return found

    def for_path(self, path: str) -> list[Chunk] | None:
        def answer(rows: _Rows) -> list[Chunk]:
            items = rows.ordered(rows.columns.rows_of_path(path), rows.delta.by_path.get(path, ()))
            return sorted(self._found(rows, items), key=lambda c: c.start_line)

        found: list[Chunk] | None = self._read(answer)
        return found

    def with_hashes(self, hashes: Collection[str]) -> list[Chunk] | None:
        def answer(rows: _Rows) -> list[Chunk]:
            keys = {k for h in hashes for k in rows.delta.by_hash.get(h, ())}
            return self._found(rows, rows.ordered(rows.columns.rows_of_hashes(hashes), keys))

        found: list[Chunk] | None = self._read(answer)
        return found

    def naming(self, names: Collection[str], limit: int, column: str) -> list[Chunk] | None:
        """The first ``limit`` rows (scan order) whose ``column`` holds any of ``names``."""

        def answer(rows: _Rows) -> list[Chunk]:
            items = rows.ordered(
                rows.columns.rows_naming(names, column), rows.delta.naming(names, column), limit
            )
            return self._found(rows, items)

        found: list[Chunk] | None = self._read(answer)
        return found

    def references(self) -> References | None:
        """The reference graph of the live rows."""

        def answer(rows: _Rows) -> References:
            graph = rows.columns.references()
            if not rows.delta.by_id:
                return graph
            chunks = rows.delta.by_id.values()
            return graph.joined(References.of_rows((c.path, c.defines, c.uses) for c in chunks))

        found: References | None = self._read(answer)
        return found

    def adjacent(self, spans: Collection[tuple[str, int, int]]) -> list[Chunk] | None:
        """The rows right above and right below each (path, start_line, end_line) span."""

        def answer(rows: _Rows) -> list[Chunk]:
            columns, delta = rows.columns, rows.delta
            found_rows: set[int] = set()
            found_keys: set[str] = set()
            for path, start, end in spans:
                at = columns.rows_of_path(path)
                lines = columns.lines[at]
                found_rows.update(
                    int(r) for r in at[(lines[:, 1] == start - 1) | (lines[:, 0] == end + 1)]
                )
                for key in delta.by_path.get(path, ()):
                    chunk = delta.by_id[key]
                    if chunk.end_line == start - 1 or chunk.start_line == end + 1:
                        found_keys.add(key)
            return self._found(rows, rows.ordered(found_rows, found_keys))

        result: list[Chunk] | None = self._read(answer)
        return result


# Past this many vectors the matrix holds int8 codes (a quarter of float32's memory: 256 bytes
# a vector of the default embedder instead of 1 KB; cosines within ~0.005 of the exact ones).
EXACT_VECTORS_MAX = 200_000
_CODE_SCALE = 127.0
_BLOCK_ROWS = 16_384  # rows scored at a time from int8 codes (a 16 MB float block)


@dataclass
class _Matrix:
    """The first ``rows`` rows of ``matrix`` are the vectors of ``hashes[:rows]``: unit float32
    rows, or int8 codes of them (``coded``). The buffer and the list grow in place when this
    process appends vectors (a reader holding an older _Matrix keeps reading its own first
    rows); ``slot`` maps each hash to its row."""

    version: int = -1
    embedder: str = ""
    hashes: list[str] = field(default_factory=list)  # rows of the matrix, in scan order
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    rows: int = 0
    slot: dict[str, int] = field(default_factory=dict)

    @property
    def coded(self) -> bool:
        return self.matrix.dtype == np.int8

    def similarity(self, query: np.ndarray) -> np.ndarray:
        """Cosine of each row with a unit ``query``."""
        if not self.coded:
            # einsum, not BLAS: a multi-threaded gemv spins against a busy machine (several
            # times slower on 2 cores under load); one pass is memory-bound anyway.
            return np.einsum("ij,j->i", self.matrix[: self.rows], query)
        scores = np.empty(self.rows, dtype=np.float32)
        scaled = (query / _CODE_SCALE).astype(np.float32)
        for start in range(0, self.rows, _BLOCK_ROWS):
            block = self.matrix[start : min(start + _BLOCK_ROWS, self.rows)]
            scores[start : start + len(block)] = block.astype(np.float32) @ scaled
        return scores


def _normalised(values: np.ndarray, dim: int) -> np.ndarray:
    block = values.reshape(-1, dim).astype(np.float32)
    norms = np.linalg.norm(block, axis=1, keepdims=True)
    return np.divide(block, norms, out=np.zeros_like(block), where=norms > 0)


def _stored(unit: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """Unit rows as the matrix holds them."""
    if dtype == np.int8:
        return np.round(unit * _CODE_SCALE).astype(np.int8)
    return unit


class VectorView:
    """One embedder's vectors as a row-normalised matrix: a cosine top-k is one matrix-vector
    product instead of LanceDB's scan of the vectors table."""

    def __init__(self, exact_max: int = EXACT_VECTORS_MAX, fixed: bool = False) -> None:
        self._held = _Matrix()
        self._lock = threading.Lock()
        self._exact_max = exact_max
        self._fixed = fixed  # as ChunkView's

    def _sync(self, table: Any, embedder: str) -> _Matrix:
        held = self._held
        if self._fixed and held.embedder == embedder:
            return held
        version = table.version
        if (version, embedder) == (held.version, held.embedder):
            return held
        where = f"embedder = {sql_literal(embedder)}"
        column = table.search().where(where).select(["content_hash"]).limit(None).to_arrow()
        hashes: list[str] = column["content_hash"].to_pylist()
        dim = table.schema.field("vector").type.list_size
        dtype = np.dtype(np.int8 if len(hashes) > self._exact_max else np.float32)
        old = held.slot if held.embedder == embedder else {}
        if held.matrix.shape[1:] != (dim,) or held.matrix.dtype != dtype:
            old = {}
        matrix = np.zeros((len(hashes), dim), dtype=dtype)
        kept = [(i, old[h]) for i, h in enumerate(hashes) if h in old]
        if kept:
            new_rows, old_rows = map(list, zip(*kept, strict=True))
            matrix[new_rows] = held.matrix[old_rows]
        slot = {h: i for i, h in enumerate(hashes)}
        missing = [h for h in hashes if h not in old]
        # Many new vectors (the first use, a large pass): one scan beats filters of 500 each.
        if len(missing) > IN_BATCH:
            wheres = [where]
        else:
            wheres = [f"{where} AND {batch}" for batch in in_filters("content_hash", missing)]
        for clause in wheres:
            query = table.search().where(clause).select(["content_hash", "vector"]).limit(None)
            for found in query.to_batches():  # batches: no float copy of every vector at once
                values = found["vector"].flatten().to_numpy(zero_copy_only=False)
                rows = [slot[h] for h in found["content_hash"].to_pylist()]
                matrix[rows] = _stored(_normalised(values, dim), dtype)
        self._held = _Matrix(version, embedder, hashes, matrix, len(hashes), slot)
        if len(missing) > IN_BATCH:  # a whole read, not a save's few rows (gc costs ms)
            release()  # Arrow's pool and the heap keep tens of MB of the read
        return self._held

    def written(
        self, before: int, after: int, embedder: str, hashes: Sequence[str], vectors: np.ndarray
    ) -> None:
        """This process inserted the vectors of ``hashes`` not yet stored (one merge, under the
        write lock), taking the table from ``before`` to ``after``: appended here when the view
        holds ``before``, without reading the table."""
        with self._lock:
            held = self._held
            dim = held.matrix.shape[1] if held.matrix.ndim == 2 else 0
            if (held.version, held.embedder) != (before, embedder) or vectors.shape[1:] != (dim,):
                return
            new = [i for i, h in enumerate(hashes) if h not in held.slot]
            matrix = held.matrix
            if held.rows + len(new) > len(matrix):  # grow by half: appends cost their own rows
                size = max(held.rows + len(new), len(matrix) * 3 // 2)
                matrix = np.zeros((size, dim), dtype=held.matrix.dtype)
                matrix[: held.rows] = held.matrix[: held.rows]
            unit = _normalised(vectors[new], dim)
            matrix[held.rows : held.rows + len(new)] = _stored(unit, held.matrix.dtype)
            for offset, i in enumerate(new):
                held.slot[hashes[i]] = held.rows + offset
                held.hashes.append(hashes[i])
            self._held = _Matrix(
                after, embedder, held.hashes, matrix, held.rows + len(new), held.slot
            )

    def having(self, version: int, embedder: str, hashes: Iterable[str]) -> list[str] | None:
        """Which of ``hashes`` have a vector from ``embedder`` at table ``version`` (None when
        the view does not hold that version: then the table is asked)."""
        with self._lock:
            held = self._held
            if (held.version, held.embedder) != (version, embedder):
                return None
            return [h for h in hashes if h in held.slot]

    def nearest(
        self, table: Any, embedder: str, vector: np.ndarray, limit: int
    ) -> list[tuple[str, float]]:
        """(content hash, cosine similarity) of the ``limit`` nearest vectors, best first (more
        when several are as near as the last)."""
        with self._lock:
            held = self._sync(table, embedder)
        if not held.rows or limit <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(query))
        if query.shape[0] != held.matrix.shape[1] or norm == 0.0:
            return []
        similarity = held.similarity(query / norm)
        if limit < len(similarity):
            # Every vector as near as the last one kept: LanceDB keeps an arbitrary few of
            # equal ones; the caller orders those by path and keeps ``limit`` chunks.
            last = similarity[np.argpartition(-similarity, limit - 1)[limit - 1]]
            top = np.flatnonzero(similarity >= last)
        else:
            top = np.arange(len(similarity))
        top = top[np.lexsort((top, -similarity[top]))]  # best first
        return [(held.hashes[i], float(similarity[i])) for i in top]


@dataclass(eq=False)
class IndexView:
    """The views of one index folder, shared by the stores a process opens on it (the server's
    search and its answerer hold one copy, not two)."""

    chunks: ChunkView
    vectors: VectorView


_SHARED: weakref.WeakValueDictionary[Path, IndexView] = weakref.WeakValueDictionary()
_SHARED_LOCK = threading.Lock()


def shared_view(
    index_dir: Path, chunks_table: Any, tree: Path | None, fixed: bool = False
) -> IndexView:
    """The process's view of ``index_dir`` (made on first use; freed with its last store);
    chunk texts are read back from ``tree``, the working tree (None: from the table).
    ``fixed``: a folder nobody writes (a base's copy), read once."""
    key = index_dir.resolve()
    with _SHARED_LOCK:
        view = _SHARED.get(key)
        if view is None:
            chunks = ChunkView(chunks_table, tree, fixed)
            view = _SHARED[key] = IndexView(chunks, VectorView(fixed=fixed))
    view.chunks.load()
    return view


def _existing(index_dir: Path) -> IndexView | None:
    with _SHARED_LOCK:
        return _SHARED.get(index_dir.resolve())


def written_chunks(
    index_dir: Path, before: int, after: int, removed: Collection[str], added: Sequence[Chunk]
) -> None:
    """Tell this process's view of ``index_dir`` (if any) of a write to the chunks table."""
    view = _existing(index_dir)
    if view is not None:
        view.chunks.written(before, after, removed, added)


def written_vectors(
    index_dir: Path,
    before: int,
    after: int,
    embedder: str,
    hashes: Sequence[str],
    vectors: np.ndarray,
) -> None:
    """Tell this process's view of ``index_dir`` (if any) of vectors inserted."""
    view = _existing(index_dir)
    if view is not None:
        view.vectors.written(before, after, embedder, hashes, vectors)


def vectors_having(
    index_dir: Path, version: int, embedder: str, hashes: Iterable[str]
) -> list[str] | None:
    """Which of ``hashes`` have a vector, told by this process's view of ``index_dir`` when it
    holds the table at ``version`` (a save's check then costs its own hashes, not a scan)."""
    view = _existing(index_dir)
    return None if view is None else view.vectors.having(version, embedder, hashes)


def forget_view(index_dir: Path) -> None:
    """Drop the shared view of an index whose tables were dropped and made again."""
    with _SHARED_LOCK:
        _SHARED.pop(index_dir.resolve(), None)
