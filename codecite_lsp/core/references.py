"""The reference graph's rows, file by file: the names each file defines, and how often it uses
each (its chunks' ``defines`` and ``uses`` summed). The index gives them, the centrality prior
(``retrieve/centrality.py``) ranks files with them.

Held as arrays of numbers, not as a tuple of lists per chunk: a repository of 100k files has
about a million chunks, and a list per chunk costs hundreds of megabytes and seconds to build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np


def _pairs(
    files: np.ndarray, names: np.ndarray, counts: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (file, name) pairs, sorted, with how often each occurs (or the sum of
    ``counts``, one per occurrence)."""
    if not len(files):
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64)
    width = int(names.max()) + 1
    keys, inverse = np.unique(files * width + names, return_inverse=True)
    summed = np.bincount(inverse.ravel(), weights=counts, minlength=len(keys))
    return np.stack([keys // width, keys % width], axis=1), summed.astype(np.int64)


@dataclass(frozen=True, eq=False)
class References:
    """``defines``: (file, name) pairs, each once. ``uses``: (file, name) pairs with ``counts``
    (how many uses). Numbers index ``paths`` and ``names``; a file in neither array (prose,
    data) is outside the graph."""

    paths: Sequence[str]
    names: Sequence[str]
    defines: np.ndarray
    uses: np.ndarray
    counts: np.ndarray

    @classmethod
    def of(
        cls,
        paths: Sequence[str],
        names: Sequence[str],
        defined: tuple[np.ndarray, np.ndarray],
        used: tuple[np.ndarray, np.ndarray],
    ) -> References:
        """From (file, name) occurrences: ``defined`` and ``used`` are (files, names) arrays,
        one entry per occurrence in a chunk."""
        defines, _ = _pairs(*defined)
        uses, counts = _pairs(*used)
        return cls(paths, names, defines, uses, counts)

    @classmethod
    def of_rows(cls, rows: Iterable[tuple[str, Sequence[str], Sequence[str]]]) -> References:
        """From (path, defines, uses) per chunk."""
        paths: dict[str, int] = {}
        names: dict[str, int] = {}
        occurrences: tuple[list[int], list[int], list[int], list[int]] = ([], [], [], [])
        define_files, define_names, use_files, use_names = occurrences
        for path, defined, used in rows:
            file = paths.setdefault(path, len(paths))
            for name in defined:
                define_files.append(file)
                define_names.append(names.setdefault(name, len(names)))
            for name in used:
                use_files.append(file)
                use_names.append(names.setdefault(name, len(names)))
        as_array = np.asarray
        return cls.of(
            list(paths),
            list(names),
            (as_array(define_files, dtype=np.int64), as_array(define_names, dtype=np.int64)),
            (as_array(use_files, dtype=np.int64), as_array(use_names, dtype=np.int64)),
        )

    def keeping(self, keep: Callable[[str], bool]) -> References:
        """Only the files whose path ``keep`` accepts."""
        kept = np.array([keep(path) for path in self.paths], dtype=bool)
        if kept.all():
            return self
        uses = kept[self.uses[:, 0]] if len(self.uses) else np.zeros(0, dtype=bool)
        defines = kept[self.defines[:, 0]] if len(self.defines) else np.zeros(0, dtype=bool)
        return References(
            self.paths, self.names, self.defines[defines], self.uses[uses], self.counts[uses]
        )

    def joined(self, other: References) -> References:
        """Both graphs' rows (a file in both: its names and counts summed)."""
        path_number = {path: i for i, path in enumerate(dict.fromkeys([*self.paths, *other.paths]))}
        name_number = {name: i for i, name in enumerate(dict.fromkeys([*self.names, *other.names]))}
        parts = [
            (
                np.array([path_number[p] for p in part.paths], dtype=np.int64),
                np.array([name_number[n] for n in part.names], dtype=np.int64),
                part,
            )
            for part in (self, other)
        ]
        concatenate = np.concatenate
        defines, _ = _pairs(
            concatenate([to_path[part.defines[:, 0]] for to_path, _, part in parts]),
            concatenate([to_name[part.defines[:, 1]] for _, to_name, part in parts]),
        )
        uses, counts = _pairs(
            concatenate([to_path[part.uses[:, 0]] for to_path, _, part in parts]),
            concatenate([to_name[part.uses[:, 1]] for _, to_name, part in parts]),
            concatenate([part.counts for _, _, part in parts]).astype(np.float64),
        )
        return References(list(path_number), list(name_number), defines, uses, counts)

    def defined_names(self) -> set[str]:
        return {self.names[int(i)] for i in np.unique(self.defines[:, 1])}

    def as_sets(self) -> tuple[set[tuple[str, str]], dict[tuple[str, str], int]]:
        """The rows by name (equal graphs compare equal whatever their numbering)."""
        defines = {(self.paths[int(f)], self.names[int(n)]) for f, n in self.defines}
        uses = {
            (self.paths[int(f)], self.names[int(n)]): int(c)
            for (f, n), c in zip(self.uses, self.counts, strict=True)
        }
        return defines, uses

    def __eq__(self, other: object) -> bool:
        return isinstance(other, References) and self.as_sets() == other.as_sets()

    __hash__ = None  # type: ignore[assignment]
