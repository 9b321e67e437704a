"""Does the prompt hold what search ranks first? Questions over installed packages' sources
(``bench/questions/installed.txt``: ``package | question``, written before any ranking was
looked at), each package's folder copied and indexed with the defaults.

Per question: search's first three results (``Retriever.results``, what ``codecite search``
prints, at ``--limit`` 10 and at the question path's own depth, ``candidates``) against the
prompt's sources (``Retriever.retrieve``): a result counts when its lines are all among them.
Each one left out is printed with the rule the question path names (``-v``).

Run: ``python bench/eval_search_in_prompt.py [-v]`` (a few seconds per package).
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import tempfile
from pathlib import Path

QUESTIONS = Path(__file__).parent / "questions" / "installed.txt"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-v", "--verbose", action="store_true", help="print each left out")
    args = parser.parse_args()

    from codecite_lsp.core.config import Config
    from codecite_lsp.index.indexer import Indexer
    from codecite_lsp.retrieve.retriever import open_retriever
    from codecite_lsp.retrieve.selection import wholly_in

    cases = [
        tuple(part.strip() for part in line.split("|", 1))
        for line in QUESTIONS.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    config = Config()
    limits = (10, config.candidates)
    held = dict.fromkeys(limits, 0)
    shown = dict.fromkeys(limits, 0)
    with tempfile.TemporaryDirectory() as scratch:
        retrievers = {}
        for package in dict.fromkeys(name for name, _ in cases):
            source = Path(str(importlib.import_module(package).__file__)).parent
            repo = Path(scratch) / package
            shutil.copytree(source, repo / package, ignore=shutil.ignore_patterns("__pycache__"))
            Indexer(repo, config).run()
            retrievers[package] = open_retriever(repo, config)
        for package, question in cases:
            retriever = retrievers[package]
            found = retriever.retrieve(question)
            counts = []
            for limit in limits:
                first = retriever.results(question, limit)[:3]
                ins = [wholly_in(r, found.selected) for r in first]
                held[limit] += sum(ins)
                shown[limit] += len(first)
                counts.append(f"{sum(ins)}/{len(first)}")
            print(f"{package:10} {'  '.join(counts)}  {question}")
            if args.verbose:
                for left in found.search_left_out:
                    chunk = left.result.chunk
                    print(f"    #{left.rank} {chunk.path}:{chunk.start_line}-{chunk.end_line}"
                          f" left out by {left.rule}")  # fmt: skip
    for limit in limits:
        print(f"search's first three (--limit {limit}) in the prompt: {held[limit]}/{shown[limit]}")


if __name__ == "__main__":
    main()
