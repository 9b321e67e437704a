"""The in-memory view of the chunk rows for the query path (by id, path, content hash, defined
and used names).

A search makes several LanceDB reads (full text, vectors, the chunks behind the vectors, the
definitions a query names, a file's chunks); each filtered read scans a column of every row
(docs/benchmarks.md: `bench/bench_search.py`). This view answers the same reads from memory,
following the table as :mod:`.view` says. Rows keep the table's scan order, so a limited look-up
returns the rows a LanceDB scan with the same filter and limit would.
"""

from __future__ import annotations

import logging
import sys
import threading
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
from .tables import CHUNK_COLUMNS, IN_BATCH, findings_of, in_filters
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
