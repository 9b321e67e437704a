"""The reference graph's prior (:mod:`.centrality`) for a live index: computed once per version
of the chunks table, and after a write computed again off the request.

A save changes the graph by a file at most, while computing it again reads every chunk's
defines and uses (~0.3-0.5 s of CPU on the standard library): the search right after a save
keeps the last prior, and a background thread brings it up to date for the searches that
follow, at most once every REFRESH_SECONDS (a burst of saves, a checkout, a formatter run over
the tree, would otherwise keep a core busy and slow the saves themselves). Only the first search
of a process waits for it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from ..core.memory import release
from ..core.references import References
from .centrality import file_centrality

log = logging.getLogger(__name__)

REFRESH_SECONDS = 30.0
RELEASE_ABOVE = 200_000  # (file, name) uses in the graph
Graph = Callable[[], References]


class CentralityPrior:
    def __init__(self, references: Graph, refresh_seconds: float = REFRESH_SECONDS) -> None:
        self._references = references
        self._refresh_seconds = refresh_seconds
        self._current: tuple[int, dict[str, float]] | None = None
        self._computed_at = 0.0
        self._lock = threading.Lock()
        self._refreshing: threading.Thread | None = None

    def at(self, version: int) -> dict[str, float]:
        """Each file's percentile for the table at ``version``, or the last one computed while
        that version's is on its way."""
        current = self._current
        if current is None:
            current = self._current = (version, self._computed())
            self._computed_at = time.monotonic()
        elif current[0] != version and time.monotonic() >= self._due():
            self._refresh(version)
        return current[1]

    def settled(self, timeout: float | None = None) -> None:
        """Until a refresh under way has finished (tests, benchmarks)."""
        thread = self._refreshing
        if thread is not None:
            thread.join(timeout)

    def _computed(self) -> dict[str, float]:
        graph = self._references()
        large = len(graph.uses) > RELEASE_ABOVE
        centrality = file_centrality(graph)
        del graph
        if large:  # its arrays are freed, but glibc keeps their pages: ~900 MB at a million
            release()  # chunks (2.1M uses), given back in ~0.2 s
        return centrality

    def _due(self) -> float:
        return self._computed_at + self._refresh_seconds

    def _refresh(self, version: int) -> None:
        with self._lock:
            if self._refreshing is not None:
                return  # one at a time: a burst of writes is caught up by the next search
            self._refreshing = threading.Thread(
                target=self._compute, args=(version,), name="codecite-prior", daemon=True
            )
            self._refreshing.start()

    def _compute(self, version: int) -> None:
        try:
            self._current = (version, self._computed())
            self._computed_at = time.monotonic()
        except Exception as exc:  # the last prior stays: a mild prior never fails a search
            log.warning("the reference graph could not be read again: %s", exc)
        finally:
            with self._lock:
                self._refreshing = None
