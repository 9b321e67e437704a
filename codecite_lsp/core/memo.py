"""A bounded memo for the hot loops over a repository's words (pure: no I/O).

A dict with ``__missing__`` rather than ``functools.lru_cache``: a hit stays in C (``memo[key]``,
or ``map(memo.__getitem__, keys)``), and a repository's vocabulary (~190k distinct identifiers,
~300k words in the CPython stdlib) thrashes a bounded LRU, which then recomputes nearly every
word on every pass. At the bound it is emptied and refilled, so memory stays bounded in a
long-lived server at the cost of recomputing once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

Value = TypeVar("Value")


class Memo(dict[str, Value], Generic[Value]):
    """key -> ``compute(key)``, computed on first use, at most ``limit`` keys kept."""

    def __init__(self, compute: Callable[[str], Value], limit: int) -> None:
        super().__init__()
        self.compute = compute
        self.limit = limit

    def __missing__(self, key: str) -> Value:
        if len(self) >= self.limit:
            self.clear()
        value = self[key] = self.compute(key)
        return value
