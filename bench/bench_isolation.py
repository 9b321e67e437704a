"""What parsing in a worker process costs (issue 10): each parse the server used to run in its
own process, timed in-process and through the resident worker, interleaved so that a busy
machine slows both alike.

    python bench/bench_isolation.py

* hover: the symbol under the cursor of a buffer (a parse of the whole buffer), for positions
  in this repository's Python files;
* save: reading and chunking one file (what a didSave does before writing);
* small pass: reading and chunking 150 files of this repository (a pass under the 200
  files that get a pool);
* the start of a worker (paid once, on the first parse);
* read back (``--read-back``): an extractive hover and an offline ask on an index of a copy of
  this repository, with the indexed text they parse again (definitions, outlines, signature
  lines) read in the process (as before) and in the resident worker, nothing kept between
  requests, so every piece makes the round trip.

    python bench/bench_isolation.py --read-back
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from codecite_lsp.core.config import Config
from codecite_lsp.ingest import readback, workers
from codecite_lsp.ingest.symbols import symbol_at
from codecite_lsp.ingest.workers import Job, SymbolQuery, prepare, prepared, symbol_isolated

REPO = Path(__file__).resolve().parent.parent
DEFINITION = re.compile(r"^(?:def|class) ([A-Za-z_]\w*)", re.MULTILINE)
ROUNDS = 200


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def timed(run: Callable[..., object], *args: object) -> float:
    started = time.perf_counter()
    run(*args)
    return (time.perf_counter() - started) * 1000


def on_a_name(text: str) -> tuple[int, int]:
    """A position on the first name of a line past the file's middle (a hover must parse)."""
    lines = text.splitlines()
    for row in range(len(lines) // 2, len(lines)):
        stripped = lines[row].lstrip()
        if stripped[:1].isalpha():
            return row, len(lines[row]) - len(stripped)
    return 0, 0


def line(label: str, inline: list[float], isolated: list[float]) -> None:
    def figures(values: list[float]) -> str:
        return f"p50 {statistics.median(values):.2f} ms, p95 {percentile(values, 0.95):.2f} ms"

    print(f"{label:<28} in-process {figures(inline):<32} worker {figures(isolated)}")


def in_process(tasks: list[readback.Reading[object]]) -> list[object]:
    return [task.run() for task in tasks]


def read_back() -> int:
    """Hover and offline ask latency, read-back parses in the process vs in the worker."""
    from codecite_lsp.answer.hover import explain_symbol
    from codecite_lsp.answer.pipeline import Answerer
    from codecite_lsp.core.config import load_config

    with tempfile.TemporaryDirectory(prefix="codecite-readback-") as folder:
        repo = Path(folder) / "repo"
        skip = shutil.ignore_patterns(".git", ".codecite", "__pycache__")
        shutil.copytree(REPO, repo, ignore=skip)
        command = [sys.executable, "-m", "codecite_lsp", "index", "--repo", str(repo), "--quiet"]
        subprocess.run(command, check=True)
        answerer = Answerer(repo, load_config(repo), in_memory=True)
        retriever = answerer.retriever
        files = sorted((repo / "codecite_lsp").rglob("*.py"))
        names = sorted({m.group(1) for f in files for m in DEFINITION.finditer(f.read_text())})
        names = names[:: max(1, len(names) // ROUNDS)][:ROUNDS]

        def hover(name: str) -> object:
            found = retriever.retrieve_for_symbol(name)
            cancel = threading.Event()
            return explain_symbol(name, found, str, note=None, cancel=cancel, model_wait=0)

        def ask(name: str) -> object:
            return answerer.ask(f"What does {name} do?")

        isolated = readback.isolated
        trips: list[int] = []  # pieces per round trip

        def counted(tasks: list[readback.Reading[object]]) -> list[object]:
            trips.append(len(tasks))
            return isolated(tasks)

        hover(names[0]), ask(names[0])  # the worker's start, the index loaded
        for label, run in (("hover (extractive)", hover), ("ask (offline)", ask)):
            timings: dict[bool, list[float]] = {False: [], True: []}
            trips.clear()
            for n, name in enumerate(names):
                for worker in (n % 2 == 0, n % 2 == 1):  # interleaved, alternating first
                    readback._ANSWERS = readback._Answers(readback.CACHE_ENTRIES)
                    readback.isolated = counted if worker else in_process  # type: ignore[assignment]
                    timings[worker].append(timed(run, name))
            line(f"{label}, {len(names)} names", timings[False], timings[True])
            print(
                f"  {len(trips) / len(names):.2f} round trips per request (at most "
                f"{max(trips, default=0)} pieces in one), {sum(trips) / len(names):.1f} pieces"
            )
            readback._ANSWERS = readback._Answers(readback.CACHE_ENTRIES)
            for name in names:
                run(name)
            trips.clear()
            again = [timed(run, name) for name in names]  # every piece kept
            print(
                f"  the same requests again: p50 {statistics.median(again):.2f} ms, p95 "
                f"{percentile(again, 0.95):.2f} ms, {len(trips)} round trips"
            )
        readback.isolated = isolated
    return 0


def main() -> int:
    if "--read-back" in sys.argv[1:]:
        return read_back()
    config = Config()
    files = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "codecite_lsp").rglob("*.py"))
    texts = {path: (REPO / path).read_text(encoding="utf-8") for path in files}

    started = time.perf_counter()
    symbol_isolated(SymbolQuery(files[0], texts[files[0]], 0, 0, "utf-16"))  # starts the worker
    print(f"worker start + first parse: {(time.perf_counter() - started) * 1000:.0f} ms")

    inline: list[float] = []
    isolated: list[float] = []
    for n in range(ROUNDS):
        path = files[n % len(files)]
        text = texts[path]
        row, column = on_a_name(text)
        query = SymbolQuery(path, text, row, column, "utf-16")
        inline.append(timed(symbol_at, path, text, row, column))
        isolated.append(timed(symbol_isolated, query))
    line("hover: symbol at a position", inline, isolated)

    inline, isolated = [], []
    for n in range(ROUNDS):
        job = Job(REPO, files[n % len(files)], config, None)
        inline.append(timed(prepare, job))
        isolated.append(timed(lambda jobs: list(prepared(jobs)), [job]))
    line("save: read + chunk one file", inline, isolated)

    tests = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "tests").rglob("*.py"))
    jobs = [Job(REPO, path, config, None) for path in (files + tests)[:150]]
    inline, isolated = [], []
    for _ in range(5):
        inline.append(timed(lambda jobs: [prepare(job) for job in jobs], jobs))
        isolated.append(timed(lambda jobs: list(prepared(jobs)), jobs))
    line(f"small pass: {len(jobs)} files", inline, isolated)
    assert len(jobs) < workers.PARALLEL_MIN_FILES
    return 0


if __name__ == "__main__":
    sys.exit(main())
