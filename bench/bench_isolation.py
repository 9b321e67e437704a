"""What parsing in a worker process costs (issue 10): each parse the server used to run in its
own process, timed in-process and through the resident worker, interleaved so that a busy
machine slows both alike.

    python bench/bench_isolation.py

* hover: the symbol under the cursor of a buffer (a parse of the whole buffer), for positions
  in this repository's Python files;
* save: reading and chunking one file (what a didSave does before writing);
* small pass: reading and chunking 150 files of this repository (a pass under the 200
  files that get a pool);
* the start of a worker (paid once, on the first parse).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from codecite_lsp.core.config import Config
from codecite_lsp.ingest import workers
from codecite_lsp.ingest.symbols import symbol_at
from codecite_lsp.ingest.workers import Job, SymbolQuery, prepare, prepared, symbol_isolated

REPO = Path(__file__).resolve().parent.parent
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


def main() -> int:
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
