"""The reads of a base and its overlay as one index: what retrieval asks a
:class:`~.store.Store`, answered from the base's local copy (only rows of files the
:class:`~.overlay.Overlay` shows unchanged) and from the local index of everything else.

Ranked reads (full text, vectors) ask the base for more than ``limit`` when masked rows may
have taken places, and merge both lists by score: BM25 scores of two indexes are not on one
scale exactly (their term statistics differ), but the overlay is small and its files are the
ones being worked on, so ranking them by their own score beside the base's is what a user sees
as "the edited file is found".
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..core.records import Chunk
from ..core.references import References

if TYPE_CHECKING:
    from ..core.config import Config
    from .meta import Meta
    from .overlay import Overlay
    from .store import Store

_WIDEN = 4  # each further ranked read of the base asks for this many times more
_WIDEN_TIMES = 3

Ranked = list[tuple[Chunk, float]]


class LayeredStore:
    """A base's local copy (read only) and the overlay's index, read as one."""

    def __init__(self, base: Store, overlay: Store, mask: Overlay) -> None:
        self.base = base
        self.overlay = overlay
        self.mask = mask
        self.index_dir = overlay.index_dir

    # -- what the overlay alone answers --------------------------------------------------------

    @property
    def meta(self) -> Meta:
        return self.overlay.meta

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        with self.base.pinned(), self.overlay.pinned():
            yield

    def wait_for_view(self) -> None:
        self.base.wait_for_view()
        self.overlay.wait_for_view()

    def versions(self) -> dict[str, int]:
        """Counters that only grow (table versions, the mask's generation): their sum changes
        whenever what a read returns may have."""
        base, over = self.base.versions(), self.overlay.versions()
        return {
            name: base.get(name, 0) + over.get(name, 0) + self.mask.generation
            for name in {*base, *over}
        }

    def chunks_version(self) -> int:
        """``versions()["chunks"]`` alone."""
        return self.base.chunks_version() + self.overlay.chunks_version() + self.mask.generation

    # -- both, the base's masked rows left out -------------------------------------------------

    def _shown(self, chunks: list[Chunk]) -> list[Chunk]:
        return [c for c in chunks if self.mask.same(c.path)]

    def _own(self, chunks: list[Chunk]) -> list[Chunk]:
        """The overlay's rows of files that are not the base's (it may lag behind a new base
        or a file saved back to the base's content until its next pass)."""
        return [c for c in chunks if not self.mask.same(c.path)]

    def _ranked(self, base: Callable[[int], Ranked], overlay: Ranked, limit: int) -> Ranked:
        overlay = [(c, s) for c, s in overlay if not self.mask.same(c.path)]
        want = self._first_ask(limit)
        for _ in range(_WIDEN_TIMES):
            found = base(want)
            kept = [(c, s) for c, s in found if self.mask.same(c.path)]
            if len(kept) >= limit or len(found) < want:
                break
            want *= _WIDEN
        merged = sorted([*kept, *overlay], key=lambda pair: -pair[1])
        return merged[:limit]

    def _first_ask(self, limit: int) -> int:
        """How many rows the base is asked for first: ``limit`` and room for masked rows among
        them. A second, wider query costs as much as the first (bench/bench_base.py: asking for
        ``limit`` alone widened every other search and doubled their time), and a few more
        rows cost next to nothing, so the room is generous: twice the masked files' share of
        the base (the files being edited are the ones queries look for), at least half again."""
        share = self.mask.masked_share()
        if share == 0.0:
            return limit
        room = math.ceil(2 * limit * share / max(1.0 - share, 0.1))
        return limit + max(room, limit // 2, 1)

    def keyword_search(
        self, query: str, limit: int, paths: Collection[str] | None = None
    ) -> Ranked:
        shown = None if paths is None else [p for p in paths if self.mask.same(p)]
        return self._ranked(
            lambda n: self.base.keyword_search(query, n, shown) if shown != [] else [],
            self.overlay.keyword_search(query, limit, paths),
            limit,
        )

    def vector_search(self, embedder: str, vector: np.ndarray, limit: int) -> Ranked:
        return self._ranked(
            lambda n: self.base.vector_search(embedder, vector, n),
            self.overlay.vector_search(embedder, vector, limit),
            limit,
        )

    def vector_count(self, embedder: str | None) -> int:
        return self.base.vector_count(embedder) + self.overlay.vector_count(embedder)

    def naming(self, names: Collection[str], limit: int, column: str = "defines") -> list[Chunk]:
        over = self._own(self.overlay.naming(names, limit, column))
        base = self._shown(self.base.naming(names, limit + self.mask.masked(), column))
        return (over + base)[:limit]

    def with_hashes(self, hashes: Collection[str]) -> list[Chunk]:
        return self._own(self.overlay.with_hashes(hashes)) + self._shown(
            self.base.with_hashes(hashes)
        )

    def adjacent(self, spans: Collection[tuple[str, int, int]]) -> list[Chunk]:
        in_base = [s for s in spans if self.mask.same(s[0])]
        in_overlay = [s for s in spans if not self.mask.same(s[0])]
        return self.overlay.adjacent(in_overlay) + self.base.adjacent(in_base)

    def chunks_for_path(self, path: str) -> list[Chunk]:
        if self.mask.same(path):
            return self.base.chunks_for_path(path)
        return self.overlay.chunks_for_path(path)

    def references(self) -> References:
        base = self.base.references().keeping(self.mask.same)
        return base.joined(self.overlay.references().keeping(lambda path: not self.mask.same(path)))


def open_index(repo: Path, config: Config, in_memory: bool = False) -> Store | LayeredStore:
    """The repository's index for reading: its own folder, layered over the base in use when
    the ``base`` setting names one that fits (index/base.py says why when none does)."""
    from .base import OpenedBase, opened
    from .store import Store

    index_dir = config.resolved_index_dir(repo)
    tree = repo if in_memory else None  # where the in-memory views read chunk texts back
    store = Store.open(index_dir, in_memory=in_memory, tree=tree)
    found = opened(repo, config, index_dir)
    folder = found.folder() if isinstance(found, OpenedBase) else None
    if not isinstance(folder, Path) or not isinstance(found, OpenedBase):
        return store  # no base, or its copy failed (said in the log)
    base = Store.open(folder, in_memory=in_memory, tree=tree, fixed=True)  # one commit's copy
    return LayeredStore(base, store, found.overlay)
