"""The in-memory views of an index folder, one per folder a process opens (shared by its
stores), and what this process's writers tell them.

They follow the tables: before each use the table's version is compared (a fraction of a
millisecond); when another writer (the indexer, another process) made a new one, only the key
column is read again and the rows that appeared are fetched. A write this process made (the
server's own indexer: saves, the watcher) is told to the view instead (:func:`written_chunks`,
:func:`written_vectors`): the view applies it without reading the table, so a saved file costs
its own rows, not a read of every key and vector (which grows with the repository).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..core.records import Chunk
from .chunk_view import ChunkView
from .vector_view import VectorView


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
