"""Retrieval on code nobody tuned the ranking on: four installed packages (rich, httpx, attrs'
``attr`` folder, werkzeug), each folder copied to a scratch repository as ``<repo>/<folder>``
and indexed with codecite's defaults (``--set key=value`` overrides them, e.g.
``--set embedding=minilm``).

Two tasks:
- ``questions``: 48 natural questions (``bench/questions/fresh.txt``, written from the code before
  any ranking was run, never reworded since), gold = one definition's lines (``fresh.jsonl``);
- ``docstrings``: 40 functions/methods per package (fixed seed), the query is the first sentence
  of the docstring, the index is a copy with EVERY docstring blanked (same line numbers), gold =
  the function's lines in that copy.

Systems, each scored by gold@10 (a result overlapping the gold lines among the first 10) and
MRR@10:
- ``search``: ``Retriever.search(query, 10)``, what ``codecite search`` lists;
- ``question``: ``Retriever.retrieve(query)``; gold@10 = a prompt source overlaps the gold,
  MRR@10 over its reranked candidates;
- ``bm25``: BM25 Okapi (k1=1.2, b=0.75) over codecite's own chunks of source files (tests, docs
  and config left out), tokens = identifiers, whole and split at snake_case / camelCase, lowered;
- ``bm25+minilm``: the same BM25 list fused by RRF (k=60) with MiniLM cosine (query vs chunk
  text) over the same chunks; chunk vectors cached in ``--cache`` by text hash.

Run: ``nice -n 10 python bench/eval_fresh.py [--json OUT] [--set key=value ...]`` (MiniLM embeds
every source chunk once, minutes on 2 cores; later runs read the cache). ``--write`` resolves
fresh.txt into fresh.jsonl against the installed packages.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib
import importlib.metadata
import json
import math
import random
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from codecite_lsp.core.records import Chunk

HERE = Path(__file__).parent / "questions"
# repository name -> (module whose folder is copied, distribution whose version is reported)
PACKAGES = {
    "rich": ("rich", "rich"),
    "httpx": ("httpx", "httpx"),
    "attrs": ("attr", "attrs"),
    "werkzeug": ("werkzeug", "werkzeug"),
}
SYSTEMS = ("search", "question", "bm25", "bm25+minilm")
DOCSTRINGS_PER_PACKAGE = 40
MIN_SENTENCE_WORDS = 5  # shorter first lines ("Get the size.") name nothing to find
DEPTH = 10
RRF_K = 60


def package_folder(repo: str) -> Path:
    module = importlib.import_module(PACKAGES[repo][0])
    return Path(str(module.__file__)).parent


def _definitions(
    tree: ast.AST,
) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]]:
    """Every class and function with its dotted name (``Class.method``, ``outer.inner``)."""
    found = []
    stack: list[tuple[str, ast.AST]] = [("", tree)]
    while stack:
        prefix, node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                found.append((name, child))
                stack.append((name + ".", child))
    return found


def resolve(path: Path, symbol: str) -> tuple[int, int]:
    """The lines of ``symbol`` in ``path``; of several (overloads, a property's setter) the longest,
    which is the implementation."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    spans = [
        (node.lineno, node.end_lineno or node.lineno)
        for name, node in _definitions(tree)
        if name == symbol
    ]
    if not spans:
        raise SystemExit(f"{symbol} is not defined in {path}")
    return max(spans, key=lambda s: s[1] - s[0])


def write_questions() -> None:
    cases = []
    for raw in (HERE / "fresh.txt").read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        repo, kind, question, path, symbol = (part.strip() for part in raw.split("|"))
        start, end = resolve(package_folder(repo) / path, symbol)
        cases.append(
            {"repo": repo, "question": question, "path": path, "symbol": symbol,
             "start": start, "end": end, "kind": kind}
        )  # fmt: skip
    target = HERE / "fresh.jsonl"
    target.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    print(f"{len(cases)} questions written to {target}")


# ---------------------------------------------------------------------------------------------
# The docstring task: a stripped copy and its queries


@dataclass(frozen=True)
class Case:
    repo: str
    query: str
    path: str  # relative to the package folder
    symbol: str
    start: int
    end: int
    kind: str


def _first_sentence(doc: str) -> str:
    paragraph = doc.strip().split("\n\n")[0]
    return re.split(r"(?<=[.!?])\s", " ".join(paragraph.split()), maxsplit=1)[0].strip()


def _docstring_nodes(tree: ast.AST) -> list[ast.Expr]:
    nodes = []
    for node in ast.walk(tree):  # the module itself included
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = node.body[0] if node.body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            nodes.append(first)
    return nodes


def strip_docstrings(source: str, tree: ast.AST) -> str:
    """Every docstring replaced by ``...`` (a body of only a docstring stays valid), its other
    lines left empty: the same line numbers, none of the docstring's words."""
    lines = source.splitlines(keepends=True)
    for node in _docstring_nodes(tree):
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        # ast's columns count UTF-8 bytes
        head = lines[first].encode()[: node.col_offset].decode()
        tail = lines[last].encode()[node.end_col_offset or 0 :].decode()
        if first == last:
            lines[first] = f"{head}...{tail}"
            continue
        lines[first] = f"{head}...\n"
        for i in range(first + 1, last):
            lines[i] = "\n"
        lines[last] = tail if tail.strip() else "\n"
    return "".join(lines)


def _only_docstring(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A body that is the docstring and at most ``pass`` / ``...``: nothing left to find."""
    rest = node.body[1:]
    return all(
        isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in rest
    )


def build_stripped(repo: str, target: Path, seed: int) -> list[Case]:
    """Copy the package with its docstrings blanked into ``target``; the sampled queries."""
    source_root = package_folder(repo)
    shutil.copytree(source_root, target, ignore=shutil.ignore_patterns("__pycache__"))
    pool: list[Case] = []
    for path in sorted(target.rglob("*.py")):
        rel = path.relative_to(target).as_posix()
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        stripped = strip_docstrings(source, tree)
        if len(stripped.splitlines()) != len(source.splitlines()):
            raise SystemExit(f"{rel}: stripping changed the line count")
        ast.parse(stripped)  # still valid Python
        path.write_text(stripped, encoding="utf-8")
        for name, node in _definitions(tree):
            if isinstance(node, ast.ClassDef) or _only_docstring(node):
                continue
            doc = ast.get_docstring(node)
            sentence = _first_sentence(doc) if doc else ""
            if len(sentence.split()) >= MIN_SENTENCE_WORDS:
                end = node.end_lineno or node.lineno
                pool.append(Case(repo, sentence, rel, name, node.lineno, end, "docstring"))
    # A sentence several functions share ("Automatically created by attrs.") has no one answer.
    counts = Counter(c.query for c in pool)
    pool = [c for c in pool if counts[c.query] == 1]
    return random.Random(f"{seed}:{repo}").sample(pool, min(DOCSTRINGS_PER_PACKAGE, len(pool)))


# ---------------------------------------------------------------------------------------------
# Baselines over codecite's own chunks

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def tokens(text: str) -> list[str]:
    """Lowered words and identifiers, each identifier also as its snake/camel parts."""
    out: list[str] = []
    for identifier in _IDENTIFIER.findall(text):
        parts = [p.lower() for p in _PART.findall(identifier)]
        out.extend(parts)
        whole = identifier.strip("_").lower()
        if len(parts) > 1 and whole:
            out.append(whole)
    return out


class BM25:
    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        postings: dict[str, list[tuple[int, int]]] = {}
        lengths = []
        for doc, text in enumerate(texts):
            words = tokens(text)
            lengths.append(len(words))
            for word, count in Counter(words).items():
                postings.setdefault(word, []).append((doc, count))
        self.postings = {
            w: (np.array([d for d, _ in p]), np.array([c for _, c in p], dtype=np.float64))
            for w, p in postings.items()
        }
        self.lengths = np.array(lengths, dtype=np.float64)
        self.k1, self.b = k1, b

    def ranked(self, query: str) -> list[int]:
        """Documents with a positive score, best first."""
        n = len(self.lengths)
        scores = np.zeros(n)
        norm = self.k1 * (1 - self.b + self.b * self.lengths / max(self.lengths.mean(), 1.0))
        for word in set(tokens(query)):
            if word not in self.postings:
                continue
            docs, tf = self.postings[word]
            idf = math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            scores[docs] += idf * tf * (self.k1 + 1) / (tf + norm[docs])
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order if scores[i] > 0]


class VectorCache:
    """MiniLM vectors of chunk texts, keyed by the text's sha256, in ``<dir>/minilm.npz``."""

    def __init__(self, directory: Path) -> None:
        from codecite_lsp.index.minilm import MiniLMEmbedder

        self.path = directory / "minilm.npz"
        self.embedder = MiniLMEmbedder()
        self.vectors: dict[str, np.ndarray] = {}
        if self.path.exists():
            stored = np.load(self.path)
            self.vectors = dict(zip(stored["keys"].tolist(), stored["vectors"], strict=True))

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self.vectors}
        if missing:
            print(f"  MiniLM: embedding {len(missing)} chunks", flush=True)
            fresh = self.embedder.embed(list(missing.values()))
            self.vectors.update(zip(missing, fresh, strict=True))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            every = list(self.vectors)
            np.savez(
                self.path, keys=np.array(every), vectors=np.stack([self.vectors[k] for k in every])
            )
        return np.stack([self.vectors[k] for k in keys])


def fused(bm25: list[int], cosine: np.ndarray) -> list[int]:
    """Reciprocal rank fusion of the BM25 list and the cosine order of every chunk."""
    scores: dict[int, float] = {}
    for rank, doc in enumerate(bm25, 1):
        scores[doc] = 1 / (RRF_K + rank)
    for rank, doc in enumerate(np.argsort(-cosine, kind="stable").tolist(), 1):
        scores[doc] = scores.get(doc, 0.0) + 1 / (RRF_K + rank)
    return sorted(scores, key=lambda d: -scores[d])


# ---------------------------------------------------------------------------------------------
# Scoring


def _overlaps(chunk: Chunk, path: str, case: Case) -> bool:
    return chunk.path == path and chunk.start_line <= case.end and chunk.end_line >= case.start


def _rank(chunks: Sequence[Chunk], path: str, case: Case) -> int | None:
    return next((i for i, c in enumerate(chunks[:DEPTH], 1) if _overlaps(c, path, case)), None)


def evaluate(
    repo_dir: Path, folder: str, cases: Sequence[Case], config: Any, cache: VectorCache
) -> list[dict[str, Any]]:
    """Per case: each system's gold@10 hit and its rank (None: not among the first 10)."""
    from codecite_lsp.core.terms import role
    from codecite_lsp.index.indexer import Indexer
    from codecite_lsp.retrieve.retriever import open_retriever

    Indexer(repo_dir, config).run()
    retriever = open_retriever(repo_dir, config)
    chunks = [
        chunk
        for path in sorted(retriever.store.files())
        for chunk in retriever.store.chunks_for_path(path)
        if role(chunk.path, chunk.language) == "code"
    ]
    bm25 = BM25([c.text for c in chunks])
    vectors = cache.matrix([c.text for c in chunks])
    queries = cache.embedder.embed([c.query for c in cases])
    print(f"  {len(chunks)} source chunks, {len(cases)} queries", flush=True)
    rows = []
    for case, query_vector in zip(cases, queries, strict=True):
        path = f"{folder}/{case.path}"
        found = retriever.retrieve(case.query)
        lexical = bm25.ranked(case.query)
        ranks = {
            "search": _rank([r.chunk for r in retriever.search(case.query, DEPTH)], path, case),
            "question": _rank([r.chunk for r in found.candidates], path, case),
            "bm25": _rank([chunks[i] for i in lexical], path, case),
            "bm25+minilm": _rank(
                [chunks[i] for i in fused(lexical, vectors @ query_vector)], path, case
            ),
        }
        hits = {name: rank is not None for name, rank in ranks.items()}
        hits["question"] = any(_overlaps(s.chunk, path, case) for s in found.selected)
        rows.append({**asdict(case), "ranks": ranks, "hits": hits})
    return rows


def _summary(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    n = max(len(rows), 1)
    return {
        name: {
            "gold@10": sum(r["hits"][name] for r in rows) / n,
            "mrr@10": sum(1 / r["ranks"][name] for r in rows if r["ranks"][name]) / n,
        }
        for name in SYSTEMS
    }


def _table(title: str, groups: dict[str, Sequence[dict[str, Any]]]) -> str:
    head = "| " + title + " | n | " + " | ".join(f"{s} g@10 | {s} MRR" for s in SYSTEMS) + " |"
    lines = [head, "|" + "---|" * (2 + 2 * len(SYSTEMS))]
    for name, rows in groups.items():
        summary = _summary(rows)
        cells = [f"{summary[s]['gold@10']:.3f} | {summary[s]['mrr@10']:.3f}" for s in SYSTEMS]
        lines.append(f"| {name} | {len(rows)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _wins(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Each query where codecite search and BM25 rank the gold differently."""
    out = []
    for r in rows:
        ours, theirs = r["ranks"]["search"], r["ranks"]["bm25"]
        if (1 / ours if ours else 0) == (1 / theirs if theirs else 0):
            continue
        verdict = "win " if (1 / ours if ours else 0) > (1 / theirs if theirs else 0) else "loss"
        out.append(
            f"  {verdict} search {ours or '-':>2} bm25 {theirs or '-':>2}  {r['repo']}: "
            f"{r['query'][:90]}"
        )
    return out


def _parse_sets(sets: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in sets:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set takes key=value, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="resolve fresh.txt -> fresh.jsonl")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "codecite-fresh")
    parser.add_argument("--json", type=Path, help="write every case's ranks and the summaries")
    parser.add_argument("--only", choices=("questions", "docstrings"), help="one task")
    parser.add_argument("--repo", action="append", choices=list(PACKAGES), help="only these")
    args = parser.parse_args()
    if args.write:
        write_questions()
        return

    from codecite_lsp.core.config import load_config

    overrides = _parse_sets(args.set)
    repos = args.repo or list(PACKAGES)
    questions = [
        q
        for line in (HERE / "fresh.jsonl").read_text("utf-8").splitlines()
        if (q := json.loads(line))["repo"] in repos
    ]
    for q in questions:  # the installed version must still have the gold where it was read
        if resolve(package_folder(q["repo"]) / q["path"], q["symbol"]) != (q["start"], q["end"]):
            raise SystemExit(f"{q['repo']} {q['symbol']}: gold moved; installed version differs")
    cache = VectorCache(args.cache)
    tasks: dict[str, list[dict[str, Any]]] = {"questions": [], "docstrings": []}
    versions = {r: importlib.metadata.version(PACKAGES[r][1]) for r in repos}
    chosen = [args.only] if args.only else list(tasks)
    with tempfile.TemporaryDirectory(prefix="codecite-fresh-") as scratch:
        for repo in repos:
            for task in chosen:
                repo_dir = Path(scratch) / f"{repo}-{task}"
                folder = repo_dir / package_folder(repo).name
                if task == "questions":
                    shutil.copytree(
                        package_folder(repo), folder, ignore=shutil.ignore_patterns("__pycache__")
                    )
                    cases = [
                        Case(repo, q["question"], q["path"], q["symbol"], q["start"], q["end"],
                             q["kind"])
                        for q in questions if q["repo"] == repo
                    ]  # fmt: skip
                else:
                    cases = build_stripped(repo, folder, args.seed)
                print(f"{task}: {repo} {versions[repo]} ({folder.name}/)", flush=True)
                config = load_config(repo_dir, overrides, environ={})
                tasks[task].extend(evaluate(repo_dir, folder.name, cases, config, cache))

    report: dict[str, Any] = {"versions": versions, "settings": overrides, "tasks": {}}
    for task, rows in tasks.items():
        if not rows:
            continue
        groups = {r: [x for x in rows if x["repo"] == r] for r in repos}
        if task == "questions":
            groups |= {
                f"kind {k}": [x for x in rows if x["kind"] == k] for k in ("how", "where", "named")
            }
        groups["all"] = rows
        print(f"\n{task}\n" + _table(task, groups))
        report["tasks"][task] = {
            "summary": {g: _summary(v) for g, v in groups.items()},
            "cases": rows,
        }
    every = [r for rows in tasks.values() for r in rows]
    print("\n" + _table("overall", {"all tasks": every}))
    for task, rows in tasks.items():
        if not rows:
            continue
        wins = _wins(rows)
        won = sum(w.startswith("  win") for w in wins)
        print(f"\n{task}: codecite search vs BM25: {won} wins, {len(wins) - won} losses, "
              f"{len(rows) - len(wins)} ties")  # fmt: skip
        print("\n".join(wins))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
