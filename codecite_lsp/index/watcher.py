"""Live watcher: file-system events (and the editor's didSave) become debounced batches of paths.

The watchdog observer thread only filters and queues (cheap per event); a worker thread waits
until the tree has been quiet for ``debounce_ms`` (or ``max_latency_ms`` has passed under a
continuous stream, e.g. a large ``git checkout``) and hands one set of repo-relative paths to
``on_batch``. A batch holds every path that was created, modified, deleted or moved (both halves of
a move). A folder that was created, deleted or moved appears as the folder's own path: for a
deleted or moved-away folder there are no events for the files it held, so the consumer treats
the folder path as "everything under it". A batch holding a ``.gitignore``/``.codeciteignore``
means the ignore rules changed (they are reloaded here already): the consumer should re-scan.
Paths the ignore rules drop (``.git``, the index, vendored folders, secrets ...) never reach
``on_batch``. Paths still pending when ``stop`` is called are dropped: the next start indexes
incrementally anyway.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)

from ..ingest.ignore import IgnoreRules
from ..ingest.paths import display_name, name_problem, repo_relative

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver

log = logging.getLogger(__name__)

# watchdog warns each time it watches a folder it already watches (nested folders created at once:
# the index's own, node_modules installs), with the repr of every watch in the message: a stderr
# line of 100+ KB per event on a large tree. Harmless, and it floods editors' logs (and stalled a
# client that reads stderr by lines).
warnings.filterwarnings(
    "ignore", message="Callback with id .* already exists", category=RuntimeWarning
)

DEFAULT_MAX_LATENCY_MS = 1000
# Opened/closed/attrib and folder-modified events say nothing about content.
_WANTED_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


class Watcher:
    def __init__(
        self,
        repo: Path,
        on_batch: Callable[[set[str]], None],
        *,
        debounce_ms: int = 200,
        rules: IgnoreRules | None = None,
        max_latency_ms: int = DEFAULT_MAX_LATENCY_MS,
    ) -> None:
        self.repo = repo
        self._root = os.path.realpath(repo)
        self._roots = list(dict.fromkeys([self._root, os.path.abspath(repo)]))
        self._on_batch = on_batch
        self._debounce = debounce_ms / 1000
        self._max_latency = max(max_latency_ms, debounce_ms) / 1000
        self.rules = rules if rules is not None else IgnoreRules.load(repo)
        self._cond = threading.Condition()
        self._pending: dict[str, bool] = {}  # path -> is a folder
        self._first = 0.0  # when the oldest pending path arrived
        self._last = 0.0  # when the newest pending path arrived
        self._stopping = False
        self._worker: threading.Thread | None = None
        self._observer: BaseObserver | None = None

    @property
    def watching(self) -> bool:
        """False when file-system events are unavailable (only ``notify`` feeds batches then)."""
        return self._observer is not None

    def start(self) -> None:
        if self._worker is not None:
            raise RuntimeError("watcher already started")
        self._worker = threading.Thread(target=self._run, name="codecite-watcher", daemon=True)
        self._worker.start()
        self._observer = self._start_observer()

    def stop(self, timeout: float = 2.0) -> None:
        with self._cond:
            self._stopping = True
            self._pending.clear()
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout)
            self._observer = None
        if self._worker is not None:
            self._worker.join(timeout)

    def notify(self, paths: Iterable[str]) -> None:
        """Queue paths from outside (the editor's didSave): absolute or repo-relative."""
        kept = {}
        for path in paths:
            rel = self._relative(path)
            if rel is not None:
                is_dir = os.path.isdir(os.path.join(self._root, rel))
                if not self.rules.is_ignored(rel, is_dir):
                    kept[rel] = is_dir
        self._queue(kept)

    # --- event side --------------------------------------------------------------------------

    def _start_observer(self) -> BaseObserver | None:
        from watchdog.observers import Observer  # ~15 ms: only when watching starts

        observer = Observer()
        handler = _Handler(self._on_event)
        try:
            observer.schedule(handler, self._root, recursive=True, event_filter=_WANTED_EVENTS)
            observer.start()
        except OSError as exc:  # e.g. the inotify watch limit, or the folder vanished
            log.warning(
                "file watching unavailable for %s (%s); only saves are seen", self.repo, exc
            )
            return None
        return observer

    def _on_event(self, event: FileSystemEvent) -> None:
        paths = [event.src_path]
        if event.event_type == "moved":
            paths.append(event.dest_path)
        kept = {}
        for raw in paths:
            rel = self._relative(os.fsdecode(raw))
            if rel is None:
                continue
            self.rules.refresh(rel)  # no-op unless rel changes the rules (.gitignore ...)
            if not self.rules.is_ignored(rel, event.is_directory):
                kept[rel] = event.is_directory
        self._queue(kept)

    def _relative(self, path: str) -> str | None:
        """Repo-relative "/" path, or None for the root itself and anything outside."""
        rel = repo_relative(path, self._roots)
        problem = name_problem(path)
        if rel is None and problem is not None:
            log.warning("not indexed: %s: %s", display_name(path), problem)
        return rel

    # --- batching ----------------------------------------------------------------------------

    def _queue(self, paths: dict[str, bool]) -> None:
        if not paths:
            return
        with self._cond:
            if self._stopping:
                return
            now = time.monotonic()
            if not self._pending:
                self._first = now
                self._cond.notify()  # the worker sleeps until something is pending
            self._pending.update(paths)
            self._last = now

    def _run(self) -> None:
        while True:
            pending = self._next_batch()
            if pending is None:
                return
            # Judged again: a rule may have changed after the event was queued (a .gitignore
            # edited in the same burst; a new virtualenv's pyvenv.cfg reported after its files).
            batch = {
                rel for rel, is_dir in pending.items() if not self.rules.is_ignored(rel, is_dir)
            }
            if not batch:
                continue
            try:
                self._on_batch(batch)
            except Exception:  # a failing consumer must not stop the watching
                log.exception("watcher: handling a batch of %d paths failed", len(batch))

    def _next_batch(self) -> dict[str, bool] | None:
        """Block until a batch is due (quiet for debounce, or max latency reached); None on stop."""
        with self._cond:
            while not self._stopping:
                if not self._pending:
                    self._cond.wait()
                    continue
                due = min(self._last + self._debounce, self._first + self._max_latency)
                remaining = due - time.monotonic()
                if remaining <= 0:
                    batch, self._pending = self._pending, {}
                    return batch
                self._cond.wait(remaining)
            return None


class _Handler(FileSystemEventHandler):
    """Runs on watchdog's observer thread: only filter and queue there."""

    def __init__(self, callback: Callable[[FileSystemEvent], None]) -> None:
        self._callback = callback

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
            self._callback(event)
        except Exception:  # an odd event must not kill the observer thread
            log.exception("watcher: cannot handle %r", event)
