"""Reading, chunking and parsing of repository and buffer text, always in worker processes, so
a crash in a grammar no guard foresaw (guard.py) costs one file, never the indexer or the server.

Workers are plain Python processes running ``serve_tasks``, fed over pipes rather than a
multiprocessing pool: a pool's spawn start re-imports the caller's main script (breaking any
unguarded script that embeds the indexer), and its workers outlive a parent killed with -9.
Here a worker exits as soon as its stdin closes, which a dead parent always does.

A large pass runs in a few workers started for it (parsing is CPU-bound and holds the GIL, so
threads would not help). Everything smaller (a small pass, a save, a hover's parse of an unsaved
buffer, indexed text parsed again as it is read back: readback.py) goes to a resident worker:
started on first use, kept between requests (a worker's start costs about a tenth of a second, a
request to a warm one well under a millisecond), replaced when it dies.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import logging
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
from typing import IO, TYPE_CHECKING, Any

from ..core.config import Config

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from ..core.positions import Encoding
    from ..core.records import Chunk
    from .scan import Skip, SourceFile
    from .symbols import SymbolAtPosition

REASON_CRASHED = "the parser crashed on this file"
PARALLEL_MIN_FILES = 200  # below this, starting workers costs more than it saves
_SLICE = 16  # files per message to a worker
_HEADER = 8
_READY = b"ready\n"  # a worker's first words, once its imports are done
_RESIDENT_IDLE = 2  # warm workers kept between requests (a pass and a hover at the same time)
_GC_THRESHOLD = 20_000  # allocations between a worker's youngest-generation collections


@dataclass(frozen=True)
class Job:
    """One file to read and, unless its revision is still ``known_revision``, chunk."""

    repo: Path
    path: str
    config: Config
    known_revision: str | None

    def run(self) -> Prepared:
        return prepare(self)


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


@dataclass(frozen=True)
class Chunking:
    """Chunk a file already read (a save whose file rows need its chunks again)."""

    path: str
    source: SourceFile
    budget: int

    def run(self) -> Prepared:
        return chunked(self.path, self.source, self.budget)


@dataclass(frozen=True)
class SymbolQuery:
    """The symbol at a position of a buffer (a hover or a question asked from the editor)."""

    path: str
    text: str
    line: int
    character: int
    encoding: Encoding

    def run(self, *, parse: bool = True) -> SymbolAtPosition | None:
        from .symbols import symbol_at

        position = (self.line, self.character)
        return symbol_at(self.path, self.text, *position, encoding=self.encoding, parse=parse)


@dataclass(frozen=True)
class Died:
    """A task whose worker died on it, alone, in a fresh worker."""

    code: int | None

    def __str__(self) -> str:
        """The signal that killed the worker ("SIGSEGV"), else its exit code."""
        if self.code is not None and self.code < 0:
            with contextlib.suppress(ValueError):
                return signal.Signals(-self.code).name
        return f"exit code {self.code}"


def prepared(jobs: list[Job]) -> Iterator[tuple[Job, Prepared]]:
    """Each job with its result, in completion order, always in worker processes."""
    workers = min(os.cpu_count() or 1, 4)
    if len(jobs) < PARALLEL_MIN_FILES or workers < 2:
        for start in range(0, len(jobs), _SLICE):
            part = jobs[start : start + _SLICE]
            for job, answer in zip(part, _RESIDENT.run(part), strict=True):
                yield job, _as_prepared(job.path, answer)
        return
    yield from _WorkerPool(workers).run(jobs)


def chunked_isolated(path: str, source: SourceFile, budget: int) -> Prepared:
    """``chunked`` in the resident worker; the file is skipped with the reason if it kills it."""
    return _as_prepared(path, _RESIDENT.run([Chunking(path, source, budget)])[0])


def symbol_isolated(query: SymbolQuery) -> SymbolAtPosition | None:
    """The symbol at a buffer position, parsed in the resident worker. Text that kills the
    worker still gets its identifier, without the definitions around it (no parse)."""
    answer = _RESIDENT.run([query])[0]
    if isinstance(answer, Died):
        log.warning("the parser crashed on %s (%s); answering without it", query.path, answer)
        return query.run(parse=False)
    from .symbols import SymbolAtPosition

    assert answer is None or isinstance(answer, SymbolAtPosition)
    return answer


def isolated(tasks: list[Any]) -> list[object]:
    """Each task's answer from the resident worker, in one round trip unless one of them kills
    it; a task that kills a worker alone answers ``Died``."""
    return _RESIDENT.run(tasks)


def _as_prepared(path: str, answer: object) -> Prepared:
    if isinstance(answer, Died):
        return Prepared(_crashed(path, answer))
    assert isinstance(answer, Prepared)
    return answer


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
    but the one that killed it: its slice is run again one file at a time, each in a fresh
    worker (``_Resident(keep=0).alone``), and a file a fresh worker dies on is skipped with the
    reason.
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
        if self._stop.is_set():
            return None
        process = _spawn()  # outside the lock: the workers' imports run side by side
        with self._live_lock:
            if not self._stop.is_set():
                self._live.add(process)
                return process
        _close_input(process)
        _reap(process)
        return None

    def _retire(self, process: subprocess.Popen[bytes]) -> None:
        """Close a worker that stopped answering."""
        with self._live_lock:
            self._live.discard(process)
        _close_input(process)
        _reap(process)

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
                    alone = _Resident(keep=0).alone(part)  # fresh workers, none kept
                    answer = [_as_prepared(j.path, a) for j, a in zip(part, alone, strict=True)]
                results.put(list(zip(part, answer, strict=True)))
        except Exception as exc:  # reported to the consumer, which must not wait forever
            results.put(exc)


class _Resident:
    """Warm workers kept between requests; each request takes an idle one (or starts one) and
    gives it back, so a hover never waits behind a pass's slice.

    A worker that dies on a request costs no task but the one that killed it: the request's
    tasks are run again one at a time, and a task a worker dies on alone gets ``Died`` as its
    answer.
    """

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._idle: list[subprocess.Popen[bytes]] = []
        self._lock = threading.Lock()

    def run(self, tasks: list[Any]) -> list[object]:
        answers = self._exchange(tasks)
        return answers if isinstance(answers, list) else self.alone(tasks)

    def alone(self, tasks: list[Any]) -> list[object]:
        """Each task in a request of its own: a worker died on a request holding all of them,
        and only one is to blame (a worker that dies on one is replaced for the next)."""
        alone: list[object] = []
        for task in tasks:
            answer = self._exchange([task])
            alone.append(answer[0] if isinstance(answer, list) else Died(answer))
        return alone

    def _exchange(self, tasks: list[Any]) -> list[object] | int | None:
        """The answers, or the exit code of the worker that died on them."""
        process = self._take()
        answers = _exchange(process, tasks)
        with self._lock:
            if answers is not None and len(self._idle) < self._keep:
                self._idle.append(process)
                return answers
        _close_input(process)
        _reap(process)
        return answers if answers is not None else process.returncode

    def _take(self) -> subprocess.Popen[bytes]:
        with self._lock:
            while self._idle:
                process = self._idle.pop()
                if process.poll() is None:
                    return process
                _reap(process)  # died while idle (the OOM killer): start another
        return _spawn()


_RESIDENT = _Resident(_RESIDENT_IDLE)


# A worker runs with the parent's working directory, usually the repository. ``-m`` would put
# that folder first on sys.path, where a repository's `json/` or `logging.py` shadows the standard
# library (every file then "crashed the parser") and runs the repository's code. The folder this
# package was imported from goes there instead.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
_WORKER_MAIN = (
    "import sys; sys.path[0] = sys.argv.pop(1); "
    "import codecite_lsp.ingest.workers as workers; workers.serve_tasks()"
)


class WorkerUnavailable(OSError):
    """A worker process died before it could take a task: the environment is broken (its
    error is on stderr), not the file it was to parse nor the index, so neither is blamed."""


def _spawn() -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-c", _WORKER_MAIN, _PACKAGE_ROOT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None
    if process.stdout.read(len(_READY)) != _READY:
        _close_input(process)
        _reap(process)
        raise WorkerUnavailable(
            f"the parsing worker could not start ({Died(process.returncode)}; its error is"
            f" above): {sys.executable} cannot import codecite_lsp cleanly; nothing was indexed"
        )
    return process


def _exchange(process: subprocess.Popen[bytes], part: list[Any]) -> list[Any] | None:
    """Send a slice, wait for its results; None if the worker died meanwhile."""
    assert process.stdin is not None and process.stdout is not None
    try:
        _send(process.stdin, part)
        answer = _receive(process.stdout)
    except (OSError, EOFError, ValueError, pickle.UnpicklingError):
        return None
    return answer if isinstance(answer, list) and len(answer) == len(part) else None


def _crashed(path: str, died: Died) -> Skip:
    from .scan import Skip

    return Skip(path, f"{REASON_CRASHED} ({died}); never indexed")


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


def serve_tasks() -> None:
    """A worker process's loop: serve lists of tasks (``Job``, ``Chunking``, ``SymbolQuery``,
    ``readback.Reading``) from stdin until it closes (the parent finished, or died)."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but results may reach the pipe
    # Ctrl-C in a terminal reaches the whole process group: the parent decides what it means
    # (it closes our stdin, and we exit), not a traceback per worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A file's parse and query make a few hundred thousand short-lived objects (nodes, matches):
    # collected every 700 allocations, they cost a worker ~3% of its CPU; every 20,000, and
    # with the imported modules frozen out of every collection, almost nothing.
    gc.freeze()
    gc.set_threshold(_GC_THRESHOLD, 10, 10)
    try:
        stdout.write(_READY)  # imports done: a death from now on is a task's (see _spawn)
        stdout.flush()
        while (part := _receive(stdin)) is not None:
            assert isinstance(part, list)
            _send(stdout, [task.run() for task in part])
    except BrokenPipeError:
        pass  # the parent is gone (a server that exited mid-pass, even before we were ready)
    # Every result is flushed: skip the interpreter's teardown (a tenth of a second the parent
    # would wait for at the end of each pass).
    os._exit(0)
