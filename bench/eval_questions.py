"""Does the answer-bearing code reach the model? Natural questions over three real repositories
(the PyPI source distributions of flask 3.1.3, jinja2 3.1.6 and h11 0.16.0: code, docs, tests,
examples and changelogs, as a checkout has them), each with the definition that answers it.

Per question: ``Retriever.retrieve`` (the question path: search, rerank, source selection) and
``Retriever.search`` (what ``codecite search`` lists). Reported:
- sources hit: the answer's lines overlap a source shown to the model (the target: >= 90%);
- candidates hit: ... overlap one of the reranked candidates (what selection could choose from);
- search MRR@10: 1/rank of the first result overlapping the answer among search's first 10;
- source lines, and the share of them that are not code (docs, tests, changelogs, examples).

Run: ``python bench/eval_questions.py`` (downloads the three sdists with pip on first use into
``--cache``; indexes each once; about 2 minutes on 2 cores). ``--write`` re-resolves the gold
lines of ``bench/questions/*.txt`` (``question | path | symbol``) into questions.jsonl.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codecite_lsp.core.records import Result

HERE = Path(__file__).parent / "questions"
REPOS = {"flask": "flask==3.1.3", "jinja2": "jinja2==3.1.6", "h11": "h11==0.16.0"}


def checkout(name: str, cache: Path) -> Path:
    """The unpacked sdist of ``name`` (downloaded with pip once)."""
    spec = REPOS[name]
    version = spec.split("==")[1]
    root = cache / f"{name}-{version}"
    if root.exists():
        return root
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"{name}-{version}.tar.gz"
    if not archive.exists():
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*pip, "-d", str(cache), spec], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(cache, filter="data")
    return root


def resolve(cache: Path) -> list[dict[str, object]]:
    """Gold lines of every question: the named definition's lines (first match) in the sdist."""
    from codecite_lsp.ingest.syntax import outline

    cases = []
    for name in REPOS:
        root = checkout(name, cache)
        for raw in (HERE / f"{name}.txt").read_text(encoding="utf-8").splitlines():
            question, path, symbol = (part.strip() for part in raw.split("|"))
            defs = outline(path, (root / path).read_text(encoding="utf-8"))
            found = [d for d in defs if d.symbol == symbol]
            if not found:
                raise SystemExit(f"{name}: {symbol} not defined in {path}")
            gold = found[0]
            cases.append(
                {"repo": name, "question": question, "path": path, "symbol": symbol,
                 "start": gold.start_line, "end": gold.end_line}
            )  # fmt: skip
    return cases


def _overlaps(result: Result, case: dict[str, object]) -> bool:
    return (
        result.chunk.path == case["path"]
        and result.chunk.start_line <= int(str(case["end"]))
        and result.chunk.end_line >= int(str(case["start"]))
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "codecite-bench")
    parser.add_argument("--write", action="store_true", help="re-resolve gold lines")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each miss")
    args = parser.parse_args()
    target = HERE / "questions.jsonl"
    if args.write:
        cases = resolve(args.cache)
        target.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
        print(f"{len(cases)} questions written to {target}")
        return
    cases = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]

    from codecite_lsp.core.config import Config
    from codecite_lsp.core.terms import is_test_path
    from codecite_lsp.index.indexer import Indexer
    from codecite_lsp.retrieve.retriever import open_retriever

    def non_code(path: str) -> bool:  # the same rule in every version measured
        return is_test_path(path) or not path.endswith(".py")

    totals = {"sources": 0.0, "candidates": 0.0, "mrr": 0.0, "lines": 0.0, "non_code": 0.0}
    for name in REPOS:
        root = checkout(name, args.cache)
        Indexer(root, Config()).run()
        retriever = open_retriever(root, Config())
        for case in (c for c in cases if c["repo"] == name):
            question = str(case["question"])
            found = retriever.retrieve(question)
            hit = any(_overlaps(s, case) for s in found.selected)
            totals["sources"] += hit
            totals["candidates"] += any(_overlaps(c, case) for c in found.candidates)
            results = retriever.search(question, limit=10)
            rank = next((i for i, r in enumerate(results, 1) if _overlaps(r, case)), None)
            totals["mrr"] += 1 / rank if rank else 0.0
            lines = [s.chunk.end_line - s.chunk.start_line + 1 for s in found.selected]
            totals["lines"] += sum(lines)
            totals["non_code"] += sum(
                n for s, n in zip(found.selected, lines, strict=True) if non_code(s.chunk.path)
            )
            if args.verbose and not hit:
                shown = ", ".join(
                    f"{s.chunk.path}:{s.chunk.start_line}-{s.chunk.end_line}"
                    for s in found.selected
                )
                print(f"MISS {name}: {question}\n  want {case['path']}:{case['start']}-"
                      f"{case['end']} ({case['symbol']})\n  got  {shown}")  # fmt: skip
    n = len(cases)
    print(f"questions {n} over {len(REPOS)} repositories")
    print(f"answer among the prompt's sources: {totals['sources'] / n:.1%}")
    print(f"answer among the reranked candidates: {totals['candidates'] / n:.1%}")
    print(f"search MRR@10 (answer lines): {totals['mrr'] / n:.3f}")
    print(f"source lines per question: {totals['lines'] / n:.0f}, "
          f"not code: {totals['non_code'] / max(totals['lines'], 1):.0%}")  # fmt: skip


if __name__ == "__main__":
    main()
