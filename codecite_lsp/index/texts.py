"""The texts of the chunks an in-memory view returns, which it does not hold (:mod:`.rows`).

A chunk's text is read back from the working tree when the file still holds it: the bytes at
the chunk's offsets, decoded, must hash to the chunk's content hash, so what is returned is the
indexed text (a file edited since gives other bytes, and the table is asked). Otherwise, from the
table: by LanceDB row id (a random read), then by id. (The view keeps the chunks it made.)

Reading a few hundred slices of files in the page cache costs a few milliseconds, where holding
every text costs about a kilobyte a chunk, for the whole life of the server.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..core.records import content_hash
from .tables import in_filters

log = logging.getLogger(__name__)

_PLACES_MAX = 200_000  # paths whose place in the tree is remembered
_BOM = b"\xef\xbb\xbf"  # the indexer's offsets count from after it (ingest/scan.py)


@dataclass(frozen=True, slots=True)
class Wanted:
    """A chunk whose text is asked for."""

    key: str
    path: str
    start_byte: int
    end_byte: int
    content_hash: str
    row_id: int  # LanceDB's _rowid when the view read it (-1: unknown)


class ChunkTexts:
    """Texts of one chunks table, read back from ``root`` (the working tree; None: the table
    only)."""

    def __init__(self, table: Any, root: Path | None) -> None:
        self._table = table
        self._root = os.path.realpath(root) if root is not None else None
        self._places: dict[str, str | None] = {}  # realpath costs a stat per folder level

    def read(self, wanted: Sequence[Wanted]) -> list[str | None]:
        """The text of each chunk; None for one the table no longer holds."""
        found: dict[str, str] = {}
        readers = (self._from_files, self._by_row_id, self._by_id)
        for reader in readers:
            rest = [w for w in wanted if w.key not in found]
            if not rest:
                break
            try:
                found.update(reader(rest))
            except Exception as exc:  # compacted meanwhile, damaged: the next reader answers
                log.debug("chunk texts not read by %s: %s", reader.__name__, exc)
        return [found.get(w.key) for w in wanted]

    def _inside(self, path: str) -> str | None:
        """The working-tree file of a repo-relative ``path``, if it is inside the tree (a table
        from elsewhere, a downloaded base, is not trusted to name only files inside)."""
        if self._root is None:
            return None
        if path in self._places:
            return self._places[path]
        relative = PurePosixPath(path)
        place = None
        if not relative.is_absolute() and ".." not in relative.parts:
            target = os.path.realpath(os.path.join(self._root, *relative.parts))
            place = target if target.startswith(self._root + os.sep) else None
        if len(self._places) >= _PLACES_MAX:
            self._places.clear()
        self._places[path] = place
        return place

    def _from_files(self, wanted: Sequence[Wanted]) -> dict[str, str]:
        by_path: dict[str, list[Wanted]] = {}
        for w in wanted:
            by_path.setdefault(w.path, []).append(w)
        found: dict[str, str] = {}
        for path, pieces in by_path.items():
            target = self._inside(path)
            if target is None:
                continue
            try:
                handle = os.open(target, os.O_RDONLY)
            except OSError:
                continue
            try:
                skip = len(_BOM) if os.pread(handle, len(_BOM), 0) == _BOM else 0
                for w in pieces:
                    data = os.pread(handle, max(w.end_byte - w.start_byte, 0), w.start_byte + skip)
                    try:
                        text = data.decode("utf-8")
                    except UnicodeDecodeError:
                        continue
                    if content_hash(text) == w.content_hash:
                        found[w.key] = text
            except OSError:
                continue
            finally:
                os.close(handle)
        return found

    def _by_row_id(self, wanted: Sequence[Wanted]) -> dict[str, str]:
        row_ids = sorted({w.row_id for w in wanted if w.row_id >= 0})
        if not row_ids:
            return {}
        rows = self._table.take_row_ids(row_ids).select(["id", "text"]).to_arrow()
        keys = {w.key for w in wanted}
        columns = zip(rows["id"].to_pylist(), rows["text"].to_pylist(), strict=True)
        return {key: text for key, text in columns if key in keys}  # compacted: other rows

    def _by_id(self, wanted: Sequence[Wanted]) -> dict[str, str]:
        found: dict[str, str] = {}
        for where in in_filters("id", [w.key for w in wanted]):
            rows = self._table.search().where(where).select(["id", "text"]).limit(None)
            table = rows.to_arrow()
            found.update(zip(table["id"].to_pylist(), table["text"].to_pylist(), strict=True))
        return found
