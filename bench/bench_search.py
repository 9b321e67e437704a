"""Query latency where users wait: ``Retriever.results`` (LSP ``codecite/search``, the CLI: the
search, then each result checked against its file, ``retrieve/on_disk.py``) and
``Retriever.retrieve`` (the question path before the model) on an index of the running
interpreter's standard library (keyword + offline vectors), in one process as the server holds it.

Queries: the first sentence of 200 function docstrings (fixed sample) for search, 50 of them for
retrieve; the first call of each kind is a warm-up and not counted. Prints p50/p95/max for the
server's path (queries answered from the in-memory view of the index, ``index/view.py``) and for
LanceDB read directly (the one-shot CLI's path, and the server's before the view), measured in
the same run, the time the view takes to load, and whether both paths rank alike.

Run: ``python bench/bench_search.py [--keep DIR]`` (indexes a copy of the stdlib first; ``--keep``
reuses or keeps that copy between runs).
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import sysconfig
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codecite_lsp.core.records import Result
    from codecite_lsp.retrieve.retriever import Retriever


def questions(root: Path, count: int, seed: int = 0) -> list[str]:
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                doc = ast.get_docstring(node)
                sentence = (doc or "").strip().split("\n\n")[0].split(". ")[0]
                if len(sentence.split()) >= 5:
                    found.append(" ".join(sentence.split()))
    random.Random(seed).shuffle(found)
    return found[:count]


def timed(run: Callable[[str], object], inputs: list[str]) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds (every thread of the process: LanceDB's too) per call, sorted:
    on a busy machine the wall clock mostly measures waiting for a core."""
    run(inputs[0])  # warm-up: opens the full-text index, loads the embedder
    wall, cpu = [], []
    for text in inputs[1:]:
        start, used = time.perf_counter(), time.process_time()
        run(text)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - used)
    return sorted(wall), sorted(cpu)


def percentiles(times: list[float]) -> tuple[float, float]:
    return times[len(times) // 2], times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]


def line(name: str, times: tuple[list[float], list[float]]) -> str:
    wall, cpu = times
    ms = [f"{value * 1000:.0f} ms" for value in (*percentiles(wall), wall[-1], *percentiles(cpu))]
    return f"| {name} | {len(wall)} | {' | '.join(ms)} |"


def ranking(results: Sequence[Result]) -> list[set[tuple[str, int, int]]]:
    """Results best first, those of equal score as one set: LanceDB's full-text search returns
    rows of equal BM25 score in no fixed order, so their order is not a difference."""
    groups: list[set[tuple[str, int, int]]] = []
    last: float | None = None
    for result in results:
        score = round(result.score, 6)
        if score != last:
            groups.append(set())
            last = score
        groups[-1].add((result.chunk.path, result.chunk.start_line, result.chunk.end_line))
    return groups


def same_rankings(fast: Retriever, slow: Retriever, asked: list[str]) -> tuple[int, int]:
    """How many searches, and how many retrievals (candidates and the prompt's sources), rank
    alike on both paths."""
    searches = sum(ranking(fast.search(q, 10)) == ranking(slow.search(q, 10)) for q in asked)
    retrievals = 0
    for question in asked:
        one, other = fast.retrieve(question), slow.retrieve(question)
        retrievals += ranking(one.candidates) == ranking(other.candidates) and ranking(
            one.selected
        ) == ranking(other.selected)
    return searches, retrievals


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, help="a folder for the stdlib copy and its index")
    args = parser.parse_args()
    from codecite_lsp.core.config import Config
    from codecite_lsp.index.indexer import Indexer
    from codecite_lsp.retrieve.retriever import open_retriever

    work = args.keep or Path(tempfile.mkdtemp(prefix="codecite-search-"))
    root = work / "stdlib"
    try:
        if not root.exists():
            shutil.copytree(
                Path(sysconfig.get_paths()["stdlib"]),
                root,
                ignore=shutil.ignore_patterns("site-packages", "__pycache__", "*.pyc"),
            )
        Indexer(root, Config()).run()
        started = time.perf_counter()
        fast = open_retriever(root, Config(), in_memory=True)
        fast.store.wait_for_view()  # loaded in the background from the store's opening
        loaded = time.perf_counter() - started
        slow = open_retriever(root, Config(), in_memory=False)
        count = fast.store.chunk_count()
        asked = questions(root, 201)
        print(f"stdlib index: {count} chunks; queries: docstring first sentences")
        print(f"in-memory view loaded in {loaded:.1f} s (background; LanceDB answers meanwhile)")
        print(f"load average {os.getloadavg()[0]:.1f} (2 cores here: figures vary with it)")
        print("| call | queries | p50 | p95 | max | CPU p50 | CPU p95 |")
        print("|---|---|---|---|---|---|---|")
        for name, retriever in (("in memory", fast), ("LanceDB reads", slow)):
            search_times = timed(lambda q, r=retriever: r.results(q, 10), asked)
            print(line(f"search (limit 10), {name}", search_times))
            print(line(f"retrieve, {name}", timed(retriever.retrieve, asked[:51])))
        searches, retrievals = same_rankings(fast, slow, asked[:50])
        print(f"rankings identical: search {searches}/50, retrieve {retrievals}/50")
        print(f"load average {os.getloadavg()[0]:.1f}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
