"""Text read back from the index and parsed again, in the resident worker (workers.py), never in
the server's or the CLI's own process.

Answering reads retrieved chunks with tree-sitter: what a run of them defines (the offline
answerer, ``offline/definitions.py``), what a chunk outlines (the hover looks for the definition
it explains), a definition's signature lines (retrieval shows them above a chunk cut from a long
method), and the quotes of an earlier answer the client sends back with a follow-up question.
None of these texts is the file the indexer parsed: runs join adjacent chunks, a fragment is
wrapped in a class shell or a ``<?php`` tag, a quote is whatever the client sent. A grammar crash
on one of them costs the worker, which is replaced; the piece reads as nothing (the answer
treats it as prose), and is logged once.

Each request sends all its pieces in one round trip, and each answer is kept by (reader, path,
content hash), so a piece read again (the same chunk in the next hover) costs no round trip.
The readers are pure functions of (path, text); they go to the worker by name (pickle), so this
module imports none of them.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .languages import language_for_path
from .workers import Died, isolated

log = logging.getLogger(__name__)

T = TypeVar("T")
CACHE_ENTRIES = 4096  # a few hundred requests' pieces; each answer is a short list
_Key = tuple[str, str, bytes]


@dataclass(frozen=True)
class Reading(Generic[T]):
    """One piece of text read by a pure, module-level function of (path, text)."""

    read: Callable[[str, str], list[T]]
    path: str
    text: str

    def run(self) -> list[T]:
        return self.read(self.path, self.text)


class _Answers:
    """The most recent answers, by (reader, path, content hash); safe across request threads."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._kept: OrderedDict[_Key, list[Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: _Key) -> list[Any] | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def put(self, key: _Key, answer: list[Any]) -> None:
        with self._lock:
            self._kept[key] = answer
            self._kept.move_to_end(key)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)


_ANSWERS = _Answers(CACHE_ENTRIES)


def read_isolated(
    read: Callable[[str, str], list[T]], pieces: Sequence[tuple[str, str]]
) -> list[list[T]]:
    """``[read(path, text) for path, text in pieces]``, parsed in the resident worker: one round
    trip for every piece not read before. A piece that kills the worker reads as ``[]``. Text
    in no parsed language never leaves the process (every reader answers ``[]`` for it)."""
    name = f"{read.__module__}.{read.__qualname__}"
    keys = [(name, path, _digest(text)) for path, text in pieces]
    answers: dict[_Key, list[Any]] = {}
    wanted: dict[_Key, Reading[T]] = {}
    for key, (path, text) in zip(keys, pieces, strict=True):
        if not text.strip() or language_for_path(path) is None:
            answers[key] = []
        elif (known := _ANSWERS.get(key)) is not None:
            answers[key] = known
        else:
            wanted[key] = Reading(read, path, text)
    if wanted:
        for key, answer in zip(wanted, isolated(list(wanted.values())), strict=True):
            if isinstance(answer, Died):
                # Kept like any answer: the piece is not parsed (nor logged) again.
                log.warning("the parser crashed (%s) on %s read back", answer, key[1])
                answer = []
            assert isinstance(answer, list)
            _ANSWERS.put(key, answer)
            answers[key] = answer
    return [list(answers[key]) for key in keys]


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
