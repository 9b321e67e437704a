"""Reading and chunking the files of an index pass: inline, or in worker processes for a large
pass (parsing is CPU-bound and holds the GIL, so threads would not help).

Workers are plain ``python -m codecite_lsp.ingest.workers`` processes fed over pipes rather than a
multiprocessing pool: a pool's spawn start re-imports the caller's main script (breaking any
unguarded script that embeds the indexer), and its workers outlive a parent killed with -9.
Here a worker exits as soon as its stdin closes, which a dead parent always does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ..core.config import Config

if TYPE_CHECKING:
    from ..core.records import Chunk
    from .scan import Skip, SourceFile

REASON_CRASHED = "the parser crashed on this file"
PARALLEL_MIN_FILES = 200  # below this, starting workers costs more than it saves
_SLICE = 16  # files per message to a worker
_HEADER = 8


@dataclass(frozen=True)
class Job:
    """One file to read and, unless its revision is still ``known_revision``, chunk."""

    repo: Path
    path: str
    config: Config
    known_revision: str | None


@dataclass(frozen=True)
class Prepared:
    source: SourceFile | Skip
    chunks: list[Chunk] | None = None  # None: not chunked (unchanged revision, or a skip)
    search_texts: list[str] | None = None  # the full-text field of each chunk
    error: str | None = None  # the chunker failed (its exception's name)


def chunked(path: str, source: SourceFile, budget: int) -> Prepared:
    from ..core.fulltext import search_terms
    from .chunking import chunk_text

    try:
        chunks = chunk_text(path, source.text, revision=source.revision, budget=budget)
    except Exception as exc:  # a chunker bug must not stop the whole index
        return Prepared(source, error=type(exc).__name__)
    return Prepared(source, chunks, [search_terms(c.text, c.path, c.symbol) for c in chunks])


def prepare(job: Job) -> Prepared:
    """Read one file and chunk it if it changed."""
    from .scan import SourceFile, read_source

    source = read_source(job.repo, job.path, job.config)
    if not isinstance(source, SourceFile) or source.revision == job.known_revision:
        return Prepared(source)
    ready = chunked(job.path, source, job.config.chunk_budget)
    # Once its chunks exist the parent needs only the file's stat and revision, not its text.
    return dataclasses.replace(ready, source=dataclasses.replace(source, text=""))


def prepared(jobs: list[Job]) -> Iterator[tuple[Job, Prepared]]:
    """Each job with its result, in completion order; in workers when the pass is large."""
    workers = min(os.cpu_count() or 1, 4)
    if len(jobs) < PARALLEL_MIN_FILES or workers < 2:
        for job in jobs:
            yield job, prepare(job)
        return
    yield from _WorkerPool(workers).run(jobs)


# ---------------------------------------------------------------------------------------------
# Worker processes


def _send(stream: IO[bytes], payload: object) -> None:
    data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(_HEADER, "big"))
    stream.write(data)
    stream.flush()


def _receive(stream: IO[bytes]) -> object | None:
    header = stream.read(_HEADER)
    if len(header) < _HEADER:
        return None
    return pickle.loads(stream.read(int.from_bytes(header, "big")))


class _WorkerPool:
    """A few worker processes, each fed slices of jobs by a parent thread (dynamic balancing).

    A worker that dies (a crash in a grammar no guard foresaw, the OOM killer) costs no file
    but the one that killed it: its slice is run again one file at a time in fresh workers, and
    a file a fresh worker dies on is skipped with the reason.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._live: set[subprocess.Popen[bytes]] = set()
        self._live_lock = threading.Lock()
        self._stop = threading.Event()

    def run(self, jobs: list[Job]) -> Iterator[tuple[Job, Prepared]]:
        slices: queue.Queue[list[Job]] = queue.Queue()
        for start in range(0, len(jobs), _SLICE):
            slices.put(jobs[start : start + _SLICE])
        results: queue.Queue[list[tuple[Job, Prepared]] | BaseException] = queue.Queue()
        feeders = [
            threading.Thread(target=self._feed, args=(slices, results), daemon=True)
            for _ in range(self.size)
        ]
        for feeder in feeders:
            feeder.start()
        try:
            remaining = len(jobs)
            while remaining:
                batch = results.get()
                if isinstance(batch, BaseException):
                    raise batch
                remaining -= len(batch)
                yield from batch
        finally:
            with self._live_lock:
                self._stop.set()  # no worker starts after this
                live = list(self._live)
            for process in live:
                _close_input(process)
            for process in live:
                _reap(process)

    def _start(self) -> subprocess.Popen[bytes] | None:
        with self._live_lock:
            if self._stop.is_set():
                return None
            process = subprocess.Popen(
                [sys.executable, "-m", "codecite_lsp.ingest.workers"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            self._live.add(process)
            return process

    def _retire(self, process: subprocess.Popen[bytes]) -> int | None:
        """Close a worker that stopped answering; its exit code."""
        with self._live_lock:
            self._live.discard(process)
        _close_input(process)
        _reap(process)
        return process.returncode

    def _feed(
        self,
        slices: queue.Queue[list[Job]],
        results: queue.Queue[list[tuple[Job, Prepared]] | BaseException],
    ) -> None:
        process: subprocess.Popen[bytes] | None = None
        try:
            while not self._stop.is_set():
                try:
                    part = slices.get_nowait()
                except queue.Empty:
                    return
                process = process or self._start()
                if process is None:
                    return
                answer = _exchange(process, part)
                if answer is None:
                    self._retire(process)
                    process = None
                    answer = self._one_by_one(part)
                    if answer is None:
                        return  # stopping
                results.put(list(zip(part, answer, strict=True)))
        except Exception as exc:  # reported to the consumer, which must not wait forever
            results.put(exc)

    def _one_by_one(self, part: list[Job]) -> list[Prepared] | None:
        """Each job of a slice a worker died on, alone; None if the pool is stopping."""
        answers: list[Prepared] = []
        process: subprocess.Popen[bytes] | None = None
        for job in part:
            process = process or self._start()
            if process is None:
                return None
            answer = _exchange(process, [job])
            if answer is None:
                code = self._retire(process)
                process = None
                if self._stop.is_set():
                    return None
                answers.append(Prepared(_crashed(job.path, code)))
            else:
                answers.extend(answer)
        if process is not None:
            self._retire(process)
        return answers


def _exchange(process: subprocess.Popen[bytes], part: list[Job]) -> list[Prepared] | None:
    """Send a slice, wait for its results; None if the worker died meanwhile."""
    assert process.stdin is not None and process.stdout is not None
    try:
        _send(process.stdin, part)
        answer = _receive(process.stdout)
    except (OSError, EOFError, ValueError, pickle.UnpicklingError):
        return None
    return answer if isinstance(answer, list) and len(answer) == len(part) else None


def _crashed(path: str, code: int | None) -> Skip:
    from .scan import Skip

    how = f"exit code {code}"
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            how = signal.Signals(-code).name
    return Skip(path, f"{REASON_CRASHED} ({how}); never indexed")


def _close_input(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):  # a worker that died has a broken pipe
        if process.stdin is not None:
            process.stdin.close()  # the worker's cue to exit


def _reap(process: subprocess.Popen[bytes]) -> None:
    try:
        process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


def _worker() -> None:
    """Serve slices of jobs from stdin until it closes (the parent finished, or died)."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but results may reach the pipe
    try:
        while (part := _receive(stdin)) is not None:
            assert isinstance(part, list)
            _send(stdout, [prepare(job) for job in part])
    except BrokenPipeError:
        pass  # the parent is gone (a server that exited mid-pass): nobody wants the results
    # Every result is flushed: skip the interpreter's teardown (a tenth of a second the parent
    # would wait for at the end of each pass).
    os._exit(0)


if __name__ == "__main__":
    # Run the module's own copy, not __main__'s: results must pickle as
    # codecite_lsp.ingest.workers.Prepared for the parent to load them.
    from codecite_lsp.ingest.workers import _worker as worker

    worker()
