"""Every retrieval path's output on fixed repositories and queries, written to one JSON file: run
it on two revisions of the code and diff the files to show a refactor changed no ranking.

Repositories: copies of installed packages (click, httpx, rich, flask, jinja2, h11; click again
with the MiniLM leg and rerank) and semble-dev's chi, express, fastapi, rack, aiohttp trees.
Queries: semble-dev's annotations and bench/questions/*.txt, their symbols, and a few probes of
the rules a query turns on (packaging, "what is", tests, docs). For each: ``search``,
``results``, ``retrieve`` (plain, and with the symbol as its context), ``retrieve_for_symbol``
(with and without uses), ``retrieve_lines`` and ``callers``: every result's path, lines, content
hash, score and terms (rounded to 1e-9).

Indexes live under ``--work`` and are reused (build them with one revision, read with both):
``PYTHONPATH=/work/main nice python bench/ranking_parity.py --out /tmp/before.json``, then
``PYTHONPATH=$PWD nice python bench/ranking_parity.py --out /tmp/after.json``;
``diff /tmp/before.json /tmp/after.json`` must be empty.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

QUESTIONS = Path(__file__).parent / "questions"
SEMBLE = Path("/work/shared/semble-dev")
INSTALLED = ("click", "httpx", "rich", "flask", "jinja2", "h11")
SEMBLE_REPOS = ("chi", "express", "fastapi", "rack", "aiohttp")
MINILM = {"meaning": "minilm", "rerank": "minilm"}
Cases = list[tuple[str, str | None, str | None]]  # (query, gold path, gold symbol)
PROBES = (
    "what is the version range of the dependencies in pyproject.toml",
    "which python versions are supported",
)


def questions() -> dict[str, Cases]:
    """Per package: (question, gold path, gold symbol) from bench/questions."""
    found: dict[str, Cases] = {}
    for file in sorted(QUESTIONS.glob("*.txt")):
        for line in file.read_text("utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            cells = [c.strip() for c in line.split("|")]
            if file.stem in ("installed", "fresh"):
                package, cells = cells[0], cells[2:] if file.stem == "fresh" else cells[1:]
            else:
                package = file.stem
            question, path, symbol = [*cells, None, None][:3]
            found.setdefault(package, []).append((question or "", path, symbol))
    return found


def semble_queries(name: str) -> Cases:
    tasks = json.loads((SEMBLE / "annotations" / f"{name}.json").read_text("utf-8"))
    cases: Cases = []
    for task in tasks:
        gold = (task["relevant"] or [None])[0]
        path = gold["path"] if isinstance(gold, dict) else gold  # a file, or its lines
        cases.append((task["query"], path, task["query"] if task["category"] == "symbol" else None))
    return cases


def prepare(work: Path, name: str, overrides: dict[str, str]) -> Any:
    """The repository's copy and index under ``work`` (built once), and its retriever."""
    from codecite_lsp.core.config import load_config
    from codecite_lsp.index.indexer import Indexer
    from codecite_lsp.retrieve.retriever import open_retriever

    label = name + ("-minilm" if overrides else "")
    repo, index = work / label / "repo", work / label / "index"
    if not repo.exists():
        repo.mkdir(parents=True)
        if name in SEMBLE_REPOS:
            tree = SEMBLE / "trees" / f"{name}.tar.gz"
            subprocess.run(["tar", "-xzf", str(tree), "-C", str(repo)], check=True)
        else:
            folder = Path(str(importlib.import_module(name).__file__)).parent
            shutil.copytree(folder, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
    config = load_config(repo, {"index_dir": str(index), **overrides}, environ={})
    if not (work / label / "built").exists():
        Indexer(repo, config).run()
        (work / label / "built").touch()
    return open_retriever(repo, config)


def shown(results: list[Any]) -> list[list[Any]]:
    return [
        [
            r.chunk.path,
            r.chunk.start_line,
            r.chunk.end_line,
            r.chunk.content_hash,
            round(r.score, 9),
            [[name, round(value, 9)] for name, value in r.terms],
        ]
        for r in results
    ]


def retrieval(found: Any) -> dict[str, Any]:
    return {
        "selected": shown(found.selected),
        "candidates": shown(found.candidates),
        "cleared_floor": found.cleared_floor,
        "left_out": [[x.rank, x.rule] for x in found.search_left_out],
        "left_out_results": shown([x.result for x in found.search_left_out]),
    }


def answers(retriever: Any, cases: Cases) -> dict[str, Any]:
    from codecite_lsp.retrieve.candidates import RetrievalContext

    out: dict[str, Any] = {}
    symbols = [s for _, _, s in cases if s]
    texts = [q for q, _, _ in cases] + symbols + list(PROBES)
    texts += [f"what is {s}" for s in symbols[:5]] + [f"tests for {s}" for s in symbols[:5]]
    texts += [f"docs for {s}" for s in symbols[:3]]
    for text in dict.fromkeys(texts):
        out[f"search {text}"] = shown(retriever.search(text, 10))
        out[f"results {text}"] = shown(retriever.results(text, 10))
        out[f"retrieve {text}"] = retrieval(retriever.retrieve(text))
    for question, path, symbol in cases:
        if not symbol:
            continue
        context = RetrievalContext(path=path, symbol=symbol)
        out[f"hover {question}"] = retrieval(retriever.retrieve(question, context))
        for uses in (True, False):
            found = retriever.retrieve_for_symbol(symbol, path, uses=uses, line=1)
            out[f"symbol {uses} {symbol} {path}"] = retrieval(found)
        out[f"callers {symbol}"] = retrieval(retriever.callers([symbol]))
        if path:
            out[f"lines {path}"] = retrieval(retriever.retrieve_lines(path, 1, 40))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/ranking-parity"))
    args = parser.parse_args()
    asked = questions()
    runs: list[tuple[str, dict[str, str], Cases]] = [(n, {}, asked.get(n, [])) for n in INSTALLED]
    runs += [("click", MINILM, asked["click"])]
    runs += [(n, {}, semble_queries(n)) for n in SEMBLE_REPOS]
    report = {}
    for name, overrides, cases in runs:
        retriever = prepare(args.work, name, overrides)
        report[name + ("-minilm" if overrides else "")] = answers(retriever, cases)
        print(name, len(cases), "cases", flush=True)
    args.out.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", "utf-8")
    calls = sum(len(v) for v in report.values())
    print(f"{calls} calls, {counted(report)} results written to {args.out}")


def counted(value: Any) -> int:
    """The results in a report: lists whose first cell is a path (a string)."""
    if isinstance(value, dict):
        return sum(counted(v) for v in value.values())
    if isinstance(value, list) and value and isinstance(value[0], list):
        return sum(1 if row and isinstance(row[0], str) else counted(row) for row in value)
    return 0


if __name__ == "__main__":
    main()
