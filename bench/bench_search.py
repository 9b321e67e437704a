"""Query latency where users wait: ``Retriever.search`` (LSP ``codecite/search``, the CLI) and
``Retriever.retrieve`` (the question path before the model) on an index of the running
interpreter's standard library (keyword + offline vectors), in one process as the server holds it.

Queries: the first sentence of 200 function docstrings (fixed sample) for search, 50 of them for
retrieve; the first call of each kind is a warm-up and not counted. Prints p50/p95/max.

Run: ``python bench/bench_search.py [--keep DIR]`` (indexes a copy of the stdlib first; ``--keep``
reuses or keeps that copy between runs).
"""

from __future__ import annotations

import argparse
import ast
import random
import shutil
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


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


def timed(run: Callable[[str], object], inputs: list[str]) -> list[float]:
    run(inputs[0])  # warm-up: opens the full-text index, loads the embedder
    times = []
    for text in inputs[1:]:
        start = time.perf_counter()
        run(text)
        times.append(time.perf_counter() - start)
    return sorted(times)


def line(name: str, times: list[float]) -> str:
    p50, p95 = times[len(times) // 2], times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    ms = [f"{value * 1000:.0f} ms" for value in (p50, p95, times[-1])]
    return f"| {name} | {len(times)} | {' | '.join(ms)} |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, help="a folder for the stdlib copy and its index")
    args = parser.parse_args()
    from codecite_lsp.answer.retrieval import open_retriever
    from codecite_lsp.core.config import Config
    from codecite_lsp.index.indexer import Indexer

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
        retriever = open_retriever(root, Config())
        count = retriever.store.chunk_count()
        asked = questions(root, 201)
        print(f"stdlib index: {count} chunks; queries: docstring first sentences")
        print("| call | queries | p50 | p95 | max |\n|---|---|---|---|---|")
        print(line("search (limit 10)", timed(lambda q: retriever.search(q, 10), asked)))
        print(line("retrieve", timed(retriever.retrieve, asked[:51])))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
