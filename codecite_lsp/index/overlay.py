"""Which of a base's files a reader may see: only those whose working-tree content is the content
the base indexed (same path, same sha256). Every other base file is masked: edited, deleted,
renamed, now ignored, or changed by a local commit. Its rows are never returned, and the local
index (the overlay) holds its current content if it still has any.

The same object tells the indexer what to leave out of the overlay (a file equal to the base's)
and the layered reads what to hide, so within a process both agree after every save; another
process builds its own from the working tree when it opens the base (a hash of every base file:
~0.1 s per 100 MB).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.records import file_revision

if TYPE_CHECKING:
    from ..ingest.scan import WorkspaceFile


class Overlay:
    """The base's files and which of them the working tree still holds unchanged."""

    def __init__(self, repo: Path, base_files: Mapping[str, str]) -> None:
        self.repo = repo
        self._base = dict(base_files)  # path -> content hash, as the base indexed it
        self._same: set[str] = set()
        # path -> (size, mtime_ns) when it was last hashed and found the base's: a later pass
        # over an unchanged file does not read it again (like the indexer's stat shortcut).
        self._hashed: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()
        self.generation = 0  # bumped whenever what is visible changes (caches keyed on it)

    def same(self, path: str) -> bool:
        """Whether the base's rows of ``path`` are the working tree's (visible)."""
        return path in self._same

    def refresh(self, listed: Iterable[WorkspaceFile]) -> None:
        """Recompute from the files a scan listed (a file not listed is masked)."""
        same = {f.path for f in listed if self._unchanged(f) or self._matches(f.path)}
        with self._lock:
            self._hashed = {p: s for p, s in self._hashed.items() if p in same}
            if same != self._same:
                self._same = same
                self.generation += 1

    def recheck(self, paths: Iterable[str], listed: Iterable[str]) -> None:
        """After a save or a watcher batch: ``paths`` changed; those of them a scan would still
        list are ``listed``."""
        present = set(listed)
        with self._lock:
            before = set(self._same)
            for path in paths:
                self._hashed.pop(path, None)
                if path in present and self._matches(path):
                    self._same.add(path)
                else:
                    self._same.discard(path)
            if before != self._same:
                self.generation += 1

    def masked(self) -> int:
        """How many of the base's files are hidden."""
        return len(self._base) - len(self._same)

    def _unchanged(self, found: WorkspaceFile) -> bool:
        return self._hashed.get(found.path) == (found.size, found.mtime_ns)

    def _matches(self, path: str) -> bool:
        expected = self._base.get(path)
        if expected is None:
            return False
        try:
            with (self.repo / path).open("rb") as handle:
                stat = os.fstat(handle.fileno())
                data = handle.read()
        except OSError:
            return False
        if file_revision(data) != expected:
            return False
        self._hashed[path] = (stat.st_size, stat.st_mtime_ns)
        return True
