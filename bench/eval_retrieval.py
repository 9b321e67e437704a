"""Retrieval-quality evaluation on real code available offline: the running interpreter's
standard library.

Construction (honest: the answer text is not in the index):
- corpus: every non-test ``.py`` file of the stdlib, copied with EVERY docstring blanked out
  (replaced by ``pass`` and blank lines, so line numbers are unchanged);
- queries: the first sentence of a function's/class's docstring (at least 6 words), a fixed
  random sample;
- relevant: the file (file-level metrics, comparable with whole-file BM25) and the chunk holding
  the definition's first line (chunk-level metrics).

Systems: (1) plain BM25 over whole files (a tiny implementation below, in the same run),
(2) our keyword-only retrieval, (3) hybrid (keyword + vectors, RRF) with each embedder
candidate, and vectors alone; ``+rerank`` rows are the question path (``Retriever.retrieve``'s
candidate order).

Run: ``python bench/eval_retrieval.py --queries 600 --seed 0`` (about 2 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import ast
import math
import random
import re
import shutil
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codecite_lsp.core.config import Config
from codecite_lsp.core.records import Chunk, Result
from codecite_lsp.index.embedding import fill_vectors
from codecite_lsp.index.minilm import MiniLMEmbedder, VectorCache
from codecite_lsp.index.static_embedding import StaticEmbedder, TrainingParams
from codecite_lsp.index.store import Store
from codecite_lsp.retrieve.retriever import Retriever
from codecite_lsp.retrieve.semantic import SemanticRanker

SKIP_PARTS = {"test", "tests", "idle_test", "site-packages", "lib2to3", "__pycache__"}
KS = (1, 5, 10)


@dataclass(frozen=True)
class Query:
    text: str
    path: str  # repo-relative
    line: int  # the definition's first line
    end_line: int


def _first_sentence(doc: str) -> str:
    paragraph = doc.strip().split("\n\n")[0]
    sentence = re.split(r"(?<=[.!?])\s", " ".join(paragraph.split()), maxsplit=1)[0]
    return sentence.strip()


def _blank_docstrings(source: str, tree: ast.Module) -> str:
    """Replace every docstring by ``pass`` + blank lines: same line numbers, no answer text."""
    lines = source.splitlines(keepends=True)
    nodes: list[ast.AST] = [tree, *ast.walk(tree)]
    for node in nodes:
        body = getattr(node, "body", None)
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not body or not isinstance(body[0], ast.Expr):
            continue
        value = body[0].value
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            continue
        first, last = body[0].lineno - 1, (body[0].end_lineno or body[0].lineno) - 1
        indent = re.match(r"\s*", lines[first]).group(0) if first < len(lines) else ""  # type: ignore[union-attr]
        lines[first] = f"{indent}pass\n"
        for i in range(first + 1, last + 1):
            lines[i] = "\n"
    return "".join(lines)


def build_corpus(target: Path) -> list[Query]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    queries: list[Query] = []
    for path in sorted(stdlib.rglob("*.py")):
        rel = path.relative_to(stdlib)
        if SKIP_PARTS & set(rel.parts):
            continue
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        out = target / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(_blank_docstrings(source, tree), encoding="utf-8")
        for node in ast.walk(tree):
            if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node)
            sentence = _first_sentence(doc) if doc else ""
            if len(sentence.split()) >= 6:
                queries.append(Query(sentence, rel.as_posix(), node.lineno, node.end_lineno or 0))
    return queries


# ---------------------------------------------------------------------------------------------
# Baseline: plain BM25 over whole files (lower-cased \w+ words, k1=1.2, b=0.75)


def _whole_file(path: str) -> Chunk:
    """The baseline's hit: a file by its path alone (line 0, no text: only file ranks count)."""
    return Chunk(path, "python", 0, 0, 0, 0, None, "file", "", "", "")


class WholeFileBM25:
    def __init__(self, repo: Path, k1: float = 1.2, b: float = 0.75) -> None:
        self.paths: list[str] = []
        self.postings: dict[str, list[tuple[int, int]]] = {}
        lengths: list[int] = []
        for path in sorted(repo.rglob("*.py")):
            words = re.findall(r"\w+", path.read_text(encoding="utf-8").lower())
            doc = len(self.paths)
            self.paths.append(path.relative_to(repo).as_posix())
            lengths.append(len(words))
            for word, count in Counter(words).items():
                self.postings.setdefault(word, []).append((doc, count))
        self.lengths = np.array(lengths, dtype=np.float64)
        self.k1, self.b = k1, b

    def search(self, query: str, limit: int) -> list[Result]:
        """Whole files as results (no lines: they never count at chunk level)."""
        scores = np.zeros(len(self.paths))
        n, average = len(self.paths), float(self.lengths.mean())
        for word in set(re.findall(r"\w+", query.lower())):
            postings = self.postings.get(word, [])
            if not postings:
                continue
            idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            docs = np.array([d for d, _ in postings])
            tf = np.array([c for _, c in postings], dtype=np.float64)
            norm = self.k1 * (1 - self.b + self.b * self.lengths[docs] / average)
            scores[docs] += idf * tf * (self.k1 + 1) / (tf + norm)
        top = np.argsort(-scores)[:limit]
        return [Result(_whole_file(self.paths[i]), float(scores[i])) for i in top if scores[i] > 0]


# ---------------------------------------------------------------------------------------------
# Metrics


@dataclass
class Scores:
    file_ranks: list[int | None]
    chunk_ranks: list[int | None]
    seconds: float


def _recall(ranks: Sequence[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def _mrr(ranks: Sequence[int | None]) -> float:
    return sum(1 / r for r in ranks if r is not None) / len(ranks)


def _paired(ranks: Sequence[int | None], reference: Sequence[int | None]) -> tuple[int, int]:
    """How many queries rank better, and how many worse, than the reference system."""
    pairs = [
        (1 / a if a else 0.0, 1 / b if b else 0.0) for a, b in zip(ranks, reference, strict=True)
    ]
    return sum(a > b for a, b in pairs), sum(a < b for a, b in pairs)


def _file_rank(paths: Sequence[str], query: Query) -> int | None:
    ordered = list(dict.fromkeys(paths))
    return ordered.index(query.path) + 1 if query.path in ordered else None


def _chunk_rank(results: Sequence[Result], query: Query) -> int | None:
    for rank, r in enumerate(results, start=1):
        if r.chunk.path == query.path and r.chunk.start_line <= query.line <= r.chunk.end_line:
            return rank
    return None


def evaluate(queries: Sequence[Query], run: Callable[[str], list[Result]]) -> Scores:
    file_ranks: list[int | None] = []
    chunk_ranks: list[int | None] = []
    start = time.perf_counter()
    for query in queries:
        results = run(query.text)
        file_ranks.append(_file_rank([r.chunk.path for r in results], query))
        chunk_ranks.append(_chunk_rank(results, query))
    return Scores(file_ranks, chunk_ranks, time.perf_counter() - start)


def by_search(retriever: Retriever) -> Callable[[str], list[Result]]:
    return lambda q: retriever.search(q, 10)


def by_retrieve(retriever: Retriever) -> Callable[[str], list[Result]]:
    """The question path: hybrid candidates in reranked order."""
    return lambda q: retriever.retrieve(q).candidates[:10]


def by_vectors(store: Store, embedder: StaticEmbedder) -> Callable[[str], list[Result]]:
    def run(query: str) -> list[Result]:
        hits = store.vector_search(embedder.name, embedder.embed([query])[0], 10)
        return [Result(chunk, score) for chunk, score in hits]

    return run


def _row(name: str, scores: Scores, n: int, chunks: bool) -> str:
    ranks = scores.chunk_ranks if chunks else scores.file_ranks
    cells = [f"{_recall(ranks, k):.3f}" for k in KS] + [f"{_mrr(ranks):.3f}"]
    per_query = 1000 * scores.seconds / n
    return f"| {name} | " + " | ".join(cells) + f" | {per_query:.1f} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--minilm-weights",
        default="1.0,0.5,2.0",
        help="weights of the MiniLM question-time rerank to compare (the first runs cold)",
    )
    parser.add_argument("--no-static-d128", action="store_true", help="skip that variant")
    parser.add_argument("--no-minilm", action="store_true", help="skip the MiniLM rerank rows")
    parser.add_argument("--no-static", action="store_true", help="skip the static embedder rows")
    parser.add_argument(
        "--minilm-cache",
        type=Path,
        help="keep MiniLM's chunk vectors here (a later run with other weights reuses them)",
    )
    args = parser.parse_args()

    from codecite_lsp.index.indexer import Indexer

    work = Path(tempfile.mkdtemp(prefix="codecite-eval-"))
    try:
        repo = work / "stdlib"
        started = time.perf_counter()
        all_queries = build_corpus(repo)
        queries = random.Random(args.seed).sample(all_queries, min(args.queries, len(all_queries)))
        files = sum(1 for _ in repo.rglob("*.py"))
        print(f"corpus: {files} stdlib files (docstrings blanked), {len(queries)} queries")

        config = Config(embedding="none", index_dir=str(work / "index"))
        t0 = time.perf_counter()
        Indexer(repo, config).run()
        store = Store.open(work / "index")
        print(f"indexed {store.chunk_count()} chunks in {time.perf_counter() - t0:.1f} s")

        systems: list[tuple[str, Scores]] = []
        bm25 = WholeFileBM25(repo)
        systems.append(
            ("BM25 whole files (baseline)", evaluate(queries, lambda q: bm25.search(q, 10)))
        )

        keyword = Retriever(store, None, config)
        systems.append(("keyword (ours)", evaluate(queries, by_search(keyword))))
        systems.append(("keyword + rerank", evaluate(queries, by_retrieve(keyword))))

        # The question-time MiniLM rerank; one cache for all weights: the first row pays for
        # embedding the candidates (cold), the others find them cached (warm).
        cache = VectorCache(args.minilm_cache or work / "minilm", MiniLMEmbedder())
        weights = [] if args.no_minilm else [float(w) for w in args.minilm_weights.split(",") if w]
        for i, weight in enumerate(weights):
            ranker = SemanticRanker(cache, weight)
            semantic = Retriever(store, None, config, semantic=ranker)
            state = "warm" if i or cache.path.exists() else "cold"
            label = f"keyword + rerank + MiniLM w={weight:g} ({state} cache)"
            systems.append((label, evaluate(queries, by_retrieve(semantic))))
        minilm_weight = weights[0] if weights else 1.0

        variants = {
            "static d128 w4": TrainingParams(dim=128, window=4),
            "static d256 w8 (default)": TrainingParams(),
        }
        if args.no_static_d128 or args.no_static:
            del variants["static d128 w4"]
        if args.no_static:
            variants.clear()
        for label, params in variants.items():
            embedder = StaticEmbedder(work / f"{label.split(' (')[0].replace(' ', '-')}.npz")
            t0 = time.perf_counter()
            corpus = store.missing_vectors("training-corpus", 40_000)
            embedder.fit([text for _, text in corpus], params)
            trained = time.perf_counter() - t0
            t0 = time.perf_counter()
            fill_vectors(store, embedder)
            print(
                f"{label}: trained in {trained:.1f} s, embedded {store.vector_count(embedder.name)}"
                f" chunks in {time.perf_counter() - t0:.1f} s"
            )
            hybrid = Retriever(store, embedder, config)
            systems.append(
                (f"vectors only, {label}", evaluate(queries, by_vectors(store, embedder)))
            )
            systems.append((f"hybrid, {label}", evaluate(queries, by_search(hybrid))))
            even = Retriever(store, embedder, config, vector_weight=1.0)
            systems.append(
                (f"hybrid, vector weight 1, {label}", evaluate(queries, by_search(even)))
            )
            systems.append((f"hybrid + rerank, {label}", evaluate(queries, by_retrieve(hybrid))))
            if args.no_minilm:
                continue
            both = Retriever(store, embedder, config, semantic=SemanticRanker(cache, minilm_weight))
            systems.append(
                (
                    f"hybrid + rerank + MiniLM w={minilm_weight:g}, {label}",
                    evaluate(queries, by_retrieve(both)),
                )
            )

        header = "| system | R@1 | R@5 | R@10 | MRR | ms/query |\n|---|---|---|---|---|---|"
        print("\nFile level (is the definition's file among the top k):")
        print(header)
        for name, scores in systems:
            print(_row(name, scores, len(queries), chunks=False))
        print("\nChunk level (is the chunk holding the definition's first line among the top k):")
        print(header)
        for name, scores in systems[1:]:
            print(_row(name, scores, len(queries), chunks=True))
        reference_name, reference = systems[2]  # keyword + rerank: the question path, no vectors
        print(f"\nPaired against {reference_name} (queries whose reciprocal rank is better/worse):")
        print("| system | file better | file worse | chunk better | chunk worse |")
        print("|---|---|---|---|---|")
        for name, scores in systems[3:]:
            file_cmp = _paired(scores.file_ranks, reference.file_ranks)
            chunk_cmp = _paired(scores.chunk_ranks, reference.chunk_ranks)
            print(f"| {name} | {file_cmp[0]} | {file_cmp[1]} | {chunk_cmp[0]} | {chunk_cmp[1]} |")
        print(
            f"\ntotal {time.perf_counter() - started:.0f} s;"
            f" command: python bench/eval_retrieval.py {' '.join(sys.argv[1:])}"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
