"""What the index's parts share about LanceDB tables: schemas, row conversion, filters,
opening (or rebuilding) a table, and errors in plain words. No lancedb import here: callers pass
the connection (importing it costs seconds).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import re
import shutil
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.records import Chunk, Finding

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger(__name__)

IN_BATCH = 500  # literals per ``path IN (...)`` statement
_OPEN_ATTEMPTS = 10  # x 0.1 s: how long a table being created elsewhere is waited for


def sql_literal(value: str) -> str:
    """A SQL string literal for a LanceDB filter: quotes doubled, nothing else is special."""
    return "'" + value.replace("'", "''") + "'"


def in_filters(column: str, values: Iterable[str]) -> Iterator[str]:
    """``column IN (...)`` filters, a bounded number of literals each."""
    batch = sorted(set(values))
    for start in range(0, len(batch), IN_BATCH):
        literals = ", ".join(sql_literal(v) for v in batch[start : start + IN_BATCH])
        yield f"{column} IN ({literals})"


class IndexDamaged(RuntimeError):
    """A part of the index could not be read even after it was rebuilt (plain words)."""


class IndexUnwritable(OSError):
    """A write to the index failed for want of room or memory: nothing in the index is damaged
    (every write commits whole, and a pass cut short is finished by the next), so nothing is
    rebuilt, which would only drop what can still be searched."""


# errno -> what happened and what to do, for the failures of a write no rebuild repairs.
_ENVIRONMENT = {
    errno.ENOSPC: ("the disk is full", "free some space"),
    errno.EDQUOT: ("the disk quota is exceeded", "free some space"),
    errno.ENOMEM: ("the machine is out of memory", "close other programs"),
    errno.EROFS: ("its file system is read-only", "pass --index-dir DIR on a writable disk"),
    errno.EACCES: ("permission denied", "make the index folder writable, or pass --index-dir DIR"),
    errno.EPERM: ("permission denied", "make the index folder writable, or pass --index-dir DIR"),
}
_OS_ERROR = re.compile(r"\(os error (\d+)\)")  # how Lance's Rust I/O errors carry an errno


def unwritable(exc: BaseException, index_dir: Path) -> IndexUnwritable | None:
    """``exc`` said as an :class:`IndexUnwritable` if the environment, not the index, is to
    blame (a full disk, an exceeded quota, no memory: ``MemoryError`` too); else None."""
    seen: BaseException | None = exc
    for _ in range(8):  # the exception and what it was raised from or while handling
        if seen is None:
            break
        code = seen.errno if isinstance(seen, OSError) else None
        if isinstance(seen, MemoryError):  # Python's own allocation failed
            code = errno.ENOMEM
        if code is None and (found := _OS_ERROR.search(str(seen))):
            code = int(found.group(1))
        if code in _ENVIRONMENT:
            what, remedy = _ENVIRONMENT[code]
            return IndexUnwritable(
                f"cannot write the index in {index_dir}: {what}. What was indexed before is "
                f"kept; {remedy} and run `codecite index` again"
            )
        seen = seen.__cause__ or seen.__context__
    return None


# Where in Lance's Rust sources an error was raised: noise to a user.
_SOURCE_LOCATION = re.compile(r",\s*/\S*\.rs:\d+:\d+")


def said(exc: BaseException) -> str:
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


# The chunks table's columns a Chunk is made of (all but ``search_text``).
CHUNK_COLUMNS = (
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
    "untrusted",
)


def table_schemas() -> tuple[pa.Schema, pa.Schema]:
    """The schemas of the ``chunks`` and ``files`` tables."""
    import pyarrow as pa

    finding = pa.struct([("kind", pa.string()), ("line", pa.int32()), ("excerpt", pa.string())])

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
            # Chunk.untrusted: text addressed to an AI reader, at file lines (ingest/injection.py)
            ("untrusted", pa.list_(finding)),
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


def vector_schema(dim: int) -> pa.Schema:
    """The schema of the ``vectors`` table for vectors of ``dim`` floats."""
    import pyarrow as pa

    return pa.schema(
        [
            ("content_hash", pa.string()),
            ("embedder", pa.string()),
            ("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def chunk_rows(chunks: list[Chunk], search_texts: list[str], schema: pa.Schema) -> pa.Table:
    """Rows of the ``chunks`` table, with each chunk's full-text field."""
    import pyarrow as pa

    columns: dict[str, list[Any]] = {
        name: [getattr(c, name) for c in chunks] for name in CHUNK_COLUMNS
    }
    columns["untrusted"] = [[_finding_row(f) for f in c.untrusted] for c in chunks]
    columns["search_text"] = search_texts
    return pa.Table.from_pydict(columns, schema=schema)


def _finding_row(finding: Finding) -> dict[str, Any]:
    return {"kind": finding.kind, "line": finding.line, "excerpt": finding.excerpt}


def findings_of(rows: list[dict[str, Any]] | None) -> tuple[Finding, ...]:
    """A chunk's findings as the ``untrusted`` column holds them."""
    return tuple(Finding(row["kind"], row["line"], row["excerpt"]) for row in rows or ())


def chunk_from_row(row: Mapping[str, Any]) -> Chunk:
    """The chunk a row of the ``chunks`` table holds."""
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
        untrusted=findings_of(row.get("untrusted")),
    )


def open_table(db: Any, index_dir: Path, name: str, schema: pa.Schema | None = None) -> Any:
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


def open_or_rebuild(db: Any, index_dir: Path, name: str, schema: pa.Schema) -> Any:
    """The table, or a new empty one in place of a table that cannot be opened (the indexer
    then finds every file's rows missing and writes them again)."""
    try:
        table = open_table(db, index_dir, name, schema)
        table.count_rows()
        return table
    except Exception as exc:
        if (environment := unwritable(exc, index_dir)) is not None:
            raise environment from exc  # no memory to open it is not damage to drop it for
        log.warning(
            "the index table %r in %s was damaged (%s); rebuilding it", name, index_dir, said(exc)
        )
    with contextlib.suppress(Exception):
        db.drop_table(name)
    shutil.rmtree(index_dir / "lance" / f"{name}.lance", ignore_errors=True)
    return db.create_table(name, schema=schema, exist_ok=True)


def readable(table: Any) -> bool:
    """Whether the table's rows can still be counted (its manifest and fragments are there)."""
    try:
        table.count_rows()
    except Exception:
        return False
    return True


def read_column(table: Any, name: str, where: str | None = None) -> list[Any]:
    """One column of a table (optionally filtered), read without the other columns."""
    query = table.search()
    if where is not None:
        query = query.where(where)
    values: list[Any] = query.select([name]).limit(None).to_arrow()[name].to_pylist()
    return values
