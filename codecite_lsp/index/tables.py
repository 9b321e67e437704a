"""The index's tables as rows: schemas, row conversion, opening (or rebuilding) a table, and
``meta.json``. No lancedb import here: callers pass the connection (importing it costs seconds).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.records import Chunk

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2  # 2: chunks carry defines/uses (retrieval follows the code)
_IN_BATCH = 500  # literals per ``path IN (...)`` statement
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


class IndexDamaged(RuntimeError):
    """A part of the index could not be read even after it was rebuilt (plain words)."""


# Where in Lance's Rust sources an error was raised: noise to a user.
_SOURCE_LOCATION = re.compile(r",\s*/\S*\.rs:\d+:\d+")


def _said(exc: BaseException) -> str:
    """An exception in a few words (Lance errors carry the source locations they went through)."""
    text = _SOURCE_LOCATION.sub("", " ".join(str(exc).split())) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


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
    # Counts at the last finished pass: what status reports after a restart, before the store
    # is opened (importing lancedb costs seconds; an editor's status must be right at once).
    files: int | None = None
    chunks: int | None = None
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


def _open_or_rebuild(db: Any, index_dir: Path, name: str, schema: pa.Schema) -> Any:
    """The table, or a new empty one in place of a table that cannot be opened (the indexer
    then finds every file's rows missing and writes them again)."""
    try:
        table = _open_table(db, index_dir, name, schema)
        table.count_rows()
        return table
    except Exception as exc:
        log.warning(
            "the index table %r in %s was damaged (%s); rebuilding it", name, index_dir, _said(exc)
        )
    with contextlib.suppress(Exception):
        db.drop_table(name)
    shutil.rmtree(index_dir / "lance" / f"{name}.lance", ignore_errors=True)
    return db.create_table(name, schema=schema, exist_ok=True)


def _readable(table: Any) -> bool:
    try:
        table.count_rows()
    except Exception:
        return False
    return True


def _column(table: Any, name: str, where: str | None = None) -> list[Any]:
    """One column of a table (optionally filtered), read without the other columns."""
    query = table.search()
    if where is not None:
        query = query.where(where)
    values: list[Any] = query.select([name]).limit(None).to_arrow()[name].to_pylist()
    return values


def read_meta(index_dir: Path) -> Meta:
    try:
        raw = json.loads((index_dir / "meta.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Meta()
    except (OSError, ValueError):
        return Meta(schema_version=-1)  # unreadable: rebuild rather than trust it
    if not isinstance(raw, dict):
        return Meta(schema_version=-1)
    known = {k: v for k, v in raw.items() if k in Meta.__dataclass_fields__}
    if not all(_well_typed(k, v) for k, v in known.items()):
        return Meta(schema_version=-1)  # e.g. {"optimized_version": "x"}: rebuild
    return Meta(**known)


_META_TEXT = frozenset({"embedder", "last_update"})
_META_REQUIRED = frozenset({"schema_version", "optimized_version"})


def _well_typed(name: str, value: Any) -> bool:
    if value is None:
        return name not in _META_REQUIRED
    if name in _META_TEXT:
        return isinstance(value, str)
    return isinstance(value, int) and not isinstance(value, bool)


def write_meta(index_dir: Path, meta: Meta) -> None:
    """Write atomically (temp file + rename): a crash never leaves half a meta.json."""
    target = index_dir / "meta.json"
    text = json.dumps(asdict(meta), indent=2)
    with contextlib.suppress(OSError, ValueError):  # missing, or damaged: rewritten below
        if target.read_text(encoding="utf-8") == text:
            return  # an unchanged index stays byte-for-byte unchanged
    temp = target.with_suffix(f".tmp{os.getpid()}.{threading.get_ident()}")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, target)
