"""The chunk rows an in-memory view (:mod:`.view`) holds, without their texts.

- :class:`Columns`: the rows of a whole read of the table, column-wise: numpy arrays, one
  vocabulary for each repeated string (paths, revisions, languages, kinds, names). A row costs a
  few hundred bytes here, against ~6 KB as a Chunk object in the dictionaries of a look-up map,
  which is what bounds a large repository's memory. Rows are sorted by id (a look-up by id is a
  binary search); ``position`` keeps each row's rank in the table's scan order. A row deleted is
  marked dead, never removed.
- :class:`Delta`: the rows appended since (a save, another writer), as whole chunks with their
  maps: few, and the view reads the whole table again when they grow many.

Both are pure: the view reads the table and the texts (:mod:`.texts`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.records import Chunk, Finding
from ..core.references import References
from .tables import findings_of

ID_WIDTH = 32  # Chunk.id: hex characters
_HASH_BYTES = 32  # a content hash: sha256


def _vocabulary(column: Any) -> tuple[np.ndarray, list[Any]]:
    """Each value's number in a list of the distinct values (None included)."""
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(column, null_encoding="encode")
    return encoded.indices.to_numpy().astype(np.int32), encoded.dictionary.to_pylist()


def _fixed_ascii(values: list[str], width: int) -> np.ndarray:
    """Strings of exactly ``width`` ASCII characters as one numpy bytes array."""
    if any(len(value) != width for value in values):
        raise ValueError(f"a key is not {width} characters long")
    return np.frombuffer("".join(values).encode("ascii"), dtype=f"S{width}").copy()


@dataclass
class _Names:
    """One list column of names (defines or uses): each row's names, and each name's rows."""

    words: list[str]
    number: dict[str, int]
    starts: np.ndarray  # row r's names are names[starts[r]:starts[r + 1]]
    names: np.ndarray
    name_starts: np.ndarray  # name n's rows are rows[name_starts[n]:name_starts[n + 1]]
    rows: np.ndarray

    @classmethod
    def of(cls, column: Any, count: int) -> _Names:
        import pyarrow.compute as pc

        parents = pc.list_parent_indices(column).to_numpy()
        names, words = _vocabulary(pc.list_flatten(column))
        starts = np.searchsorted(parents, np.arange(count + 1)).astype(np.int64)
        by_name = np.argsort(names, kind="stable")
        name_starts = np.searchsorted(names[by_name], np.arange(len(words) + 1))
        return cls(
            words=words,
            number={word: i for i, word in enumerate(words)},
            starts=starts,
            names=names,
            name_starts=name_starts.astype(np.int64),
            rows=parents[by_name].astype(np.int32),
        )

    def of_row(self, row: int) -> tuple[str, ...]:
        words = self.words
        return tuple(words[n] for n in self.names[self.starts[row] : self.starts[row + 1]])

    def naming(self, names: Iterable[str]) -> np.ndarray:
        spans = [
            self.rows[self.name_starts[n] : self.name_starts[n + 1]]
            for n in (self.number.get(name) for name in names)
            if n is not None
        ]
        return np.unique(np.concatenate(spans)) if spans else np.zeros(0, dtype=np.int32)


@dataclass
class Columns:
    """The rows of one whole read of the chunks table (see the module's docstring)."""

    ids: np.ndarray  # S32, sorted
    position: np.ndarray  # rank in the table's scan order
    row_ids: np.ndarray  # LanceDB's _rowid (changes when the table is compacted)
    alive: np.ndarray
    paths: list[str]
    path_number: dict[str, int]
    path_of: np.ndarray
    path_starts: np.ndarray  # path p's rows are path_rows[path_starts[p]:path_starts[p + 1]]
    path_rows: np.ndarray
    languages: list[str]
    language_of: np.ndarray
    kinds: list[str]
    kind_of: np.ndarray
    revisions: list[str]
    revision_of: np.ndarray
    lines: np.ndarray  # (start_line, end_line)
    spans: np.ndarray  # (start_byte, end_byte)
    symbols: Any  # a pyarrow string array (null: no symbol)
    hashes: np.ndarray  # (rows, 32) bytes of each content hash
    hash_prefix: np.ndarray  # first 8 bytes of each hash, sorted, and their rows:
    hash_rows: np.ndarray
    defines: _Names
    uses: _Names
    untrusted: dict[int, tuple[Finding, ...]]

    @classmethod
    def of(cls, table: Any) -> Columns:
        """The rows of an Arrow table (its columns: CHUNK_COLUMNS but the text, and _rowid),
        in the table's scan order."""
        import pyarrow as pa
        import pyarrow.compute as pc

        ids = _fixed_ascii(table["id"].to_pylist(), ID_WIDTH)
        order = np.argsort(ids, kind="stable")  # equal ids keep scan order: the last one counts
        table = table.take(pa.array(order))
        ids = ids[order]
        count = len(ids)
        alive = np.ones(count, dtype=bool)
        if count > 1:
            alive[:-1] &= ids[:-1] != ids[1:]
        path_of, paths = _vocabulary(table["path"].combine_chunks())
        by_path = np.argsort(path_of, kind="stable")
        hex_hashes = table["content_hash"].to_pylist()
        if any(len(h) != 2 * _HASH_BYTES for h in hex_hashes):
            raise ValueError("a content hash is not a sha256")
        hashes = np.frombuffer(bytes.fromhex("".join(hex_hashes)), dtype=np.uint8)
        hashes = hashes.reshape(count, _HASH_BYTES)
        prefix = hashes[:, :8].copy().view(">u8").ravel()
        by_hash = np.argsort(prefix, kind="stable")
        untrusted_column = table["untrusted"].combine_chunks()
        lengths = pc.fill_null(pc.list_value_length(untrusted_column), 0).to_numpy()
        return cls(
            ids=ids,
            position=order.astype(np.int64),
            row_ids=table["_rowid"].to_numpy().astype(np.uint64),
            alive=alive,
            paths=paths,
            path_number={path: i for i, path in enumerate(paths)},
            path_of=path_of,
            path_starts=np.searchsorted(path_of[by_path], np.arange(len(paths) + 1)),
            path_rows=by_path.astype(np.int32),
            languages=(vocabulary := _vocabulary(table["language"].combine_chunks()))[1],
            language_of=vocabulary[0],
            kinds=(kind := _vocabulary(table["kind"].combine_chunks()))[1],
            kind_of=kind[0],
            revisions=(revision := _vocabulary(table["revision"].combine_chunks()))[1],
            revision_of=revision[0],
            lines=np.stack(
                [table[n].to_numpy().astype(np.int32) for n in ("start_line", "end_line")], 1
            ),
            spans=np.stack(
                [table[n].to_numpy().astype(np.int64) for n in ("start_byte", "end_byte")], 1
            ),
            symbols=table["symbol"].combine_chunks(),
            hashes=hashes,
            hash_prefix=prefix[by_hash],
            hash_rows=by_hash.astype(np.int32),
            defines=_Names.of(table["defines"].combine_chunks(), count),
            uses=_Names.of(table["uses"].combine_chunks(), count),
            untrusted={
                int(row): findings_of(untrusted_column[int(row)].as_py())
                for row in np.flatnonzero(lengths)
            },
        )

    def __len__(self) -> int:
        return len(self.ids)

    # -- look-ups: live rows only ----------------------------------------------------------

    def rows_of_ids(self, keys: Sequence[str]) -> np.ndarray:
        """The row of each id, -1 where none is alive."""
        found = np.full(len(keys), -1, dtype=np.int64)
        usable = [i for i, key in enumerate(keys) if len(key) == ID_WIDTH and key.isascii()]
        if not usable or not len(self.ids):
            return found
        wanted = np.array([keys[i].encode("ascii") for i in usable], dtype=f"S{ID_WIDTH}")
        at = np.searchsorted(self.ids, wanted, side="right") - 1  # the last of equal ids
        at = np.clip(at, 0, len(self.ids) - 1)
        hit = (self.ids[at] == wanted) & self.alive[at]
        found[np.asarray(usable)[hit]] = at[hit]
        return found

    def rows_of_path(self, path: str) -> np.ndarray:
        number = self.path_number.get(path)
        if number is None:
            return np.zeros(0, dtype=np.int32)
        rows = self.path_rows[self.path_starts[number] : self.path_starts[number + 1]]
        return rows[self.alive[rows]]

    def rows_of_hashes(self, hashes: Collection[str]) -> np.ndarray:
        digests = []
        for value in hashes:
            if len(value) == 2 * _HASH_BYTES:
                with contextlib.suppress(ValueError):  # not hex: no row holds it
                    digests.append(bytes.fromhex(value))
        if not digests or not len(self.ids):
            return np.zeros(0, dtype=np.int32)
        wanted = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(-1, _HASH_BYTES)
        prefixes = wanted[:, :8].copy().view(">u8").ravel()
        # one binary search for all of them: a vector search asks for dozens at once
        lows = np.searchsorted(self.hash_prefix, prefixes, side="left")
        highs = np.searchsorted(self.hash_prefix, prefixes, side="right")
        found = [
            rows[(self.hashes[rows] == digest).all(axis=1)]
            for digest, low, high in zip(wanted, lows, highs, strict=True)
            if high > low
            for rows in (self.hash_rows[low:high],)
        ]
        rows = np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int32)
        return rows[self.alive[rows]]

    def rows_naming(self, names: Iterable[str], column: str) -> np.ndarray:
        rows = (self.defines if column == "defines" else self.uses).naming(names)
        return rows[self.alive[rows]]

    def references(self) -> References:
        """The reference graph of the live rows."""
        occurrences = []
        for names in (self.defines, self.uses):
            rows = np.repeat(np.arange(len(self.ids)), np.diff(names.starts))
            live = self.alive[rows]
            occurrences.append((self.path_of[rows[live]], names.names[live]))
        (define_files, define_names), (use_files, use_names) = occurrences
        # one numbering of names for both columns: the uses' words after the defines' ones
        words = list(self.defines.words)
        known = self.defines.number
        extra: dict[str, int] = {}
        for word in self.uses.words:
            if word not in known:
                extra.setdefault(word, len(words) + len(extra))
        words += list(extra)
        renumber = np.array(
            [known.get(w, extra.get(w, -1)) for w in self.uses.words], dtype=np.int64
        )
        return References.of(
            self.paths,
            words,
            (define_files.astype(np.int64), define_names.astype(np.int64)),
            (
                use_files.astype(np.int64),
                renumber[use_names] if len(use_names) else use_names.astype(np.int64),
            ),
        )

    # -- the rows' fields ------------------------------------------------------------------

    def key(self, row: int) -> str:
        return self.ids[row].decode("ascii")

    def path(self, row: int) -> str:
        return self.paths[self.path_of[row]]

    def content_hash(self, row: int) -> str:
        return bytes(self.hashes[row]).hex()

    def span(self, row: int) -> tuple[int, int]:
        start, end = self.spans[row]
        return int(start), int(end)

    def chunks(self, rows: Sequence[int], texts: Sequence[str]) -> list[Chunk]:
        """The chunks of ``rows``, given their texts."""
        import pyarrow as pa

        symbols = self.symbols.take(pa.array(rows, type=pa.int64())).to_pylist()
        return [
            Chunk(
                path=self.paths[self.path_of[row]],
                language=self.languages[self.language_of[row]],
                start_line=int(self.lines[row, 0]),
                end_line=int(self.lines[row, 1]),
                start_byte=int(self.spans[row, 0]),
                end_byte=int(self.spans[row, 1]),
                symbol=symbol,
                kind=self.kinds[self.kind_of[row]],
                text=text,
                content_hash=bytes(self.hashes[row]).hex(),
                revision=self.revisions[self.revision_of[row]],
                defines=self.defines.of_row(row),
                uses=self.uses.of_row(row),
                untrusted=self.untrusted.get(row, ()),
            )
            for row, symbol, text in zip(rows, symbols, texts, strict=True)
        ]

    # -- changes ---------------------------------------------------------------------------

    def kill(self, rows: np.ndarray) -> None:
        self.alive[rows] = False

    def reposition(self, keys: Sequence[str], row_ids: np.ndarray) -> np.ndarray:
        """The table's rows now, in scan order (``keys``, with their ``row_ids``): live rows
        found there take their new rank and row id; the others die. Returns which of ``keys``
        were found."""
        rows = self.rows_of_ids(keys)
        hit = rows >= 0
        alive = np.zeros(len(self.ids), dtype=bool)
        alive[rows[hit]] = True
        self.alive &= alive
        self.position[rows[hit]] = np.flatnonzero(hit)
        self.row_ids[rows[hit]] = row_ids[hit]
        return hit


@dataclass
class Delta:
    """Rows appended after the columns were read, as whole chunks, with the maps the look-ups
    use. ``position`` continues the scan order of the columns."""

    next_position: int = 0
    position: dict[str, int] = field(default_factory=dict)
    by_id: dict[str, Chunk] = field(default_factory=dict)
    by_path: dict[str, set[str]] = field(default_factory=dict)
    by_hash: dict[str, set[str]] = field(default_factory=dict)
    defines: dict[str, set[str]] = field(default_factory=dict)
    uses: dict[str, set[str]] = field(default_factory=dict)

    def _maps(self, chunk: Chunk) -> Iterable[tuple[dict[str, set[str]], str]]:
        yield self.by_path, chunk.path
        yield self.by_hash, chunk.content_hash
        yield from ((self.defines, name) for name in chunk.defines)
        yield from ((self.uses, name) for name in chunk.uses)

    def __len__(self) -> int:
        return len(self.by_id)

    def add(self, key: str, chunk: Chunk) -> None:
        """Append a row (last in scan order, as LanceDB appends it)."""
        if key in self.by_id:
            self.remove(key)
        self.by_id[key] = chunk
        self.position[key] = self.next_position
        self.next_position += 1
        for index, value in self._maps(chunk):
            index.setdefault(value, set()).add(key)

    def remove(self, key: str) -> None:
        chunk = self.by_id.pop(key)
        del self.position[key]
        for index, value in self._maps(chunk):
            keys = index.get(value)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del index[value]

    def naming(self, names: Iterable[str], column: str) -> set[str]:
        index = self.defines if column == "defines" else self.uses
        return {key for name in names for key in index.get(name, ())}
