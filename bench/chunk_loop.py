"""A quick loop for ranking work on bench/eval_retrieval.py's task (docstring sentence -> the
blanked definition on the stdlib): the corpus, its index and the default embedder are built once
into a folder that later runs reuse, so an experiment scores hundreds of queries in a minute.

Run: ``python bench/chunk_loop.py --keep DIR --queries 300 --seed 1`` (the first run builds
DIR; ``--why`` adds where the definition's chunk went when it was not first).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from eval_retrieval import (
    Query,
    Scores,
    _mrr,
    _recall,
    build_corpus,
    by_retrieve,
    by_search,
    evaluate,
)

from codecite_lsp.core.config import Config
from codecite_lsp.core.records import Result
from codecite_lsp.index.embedding import fill_vectors
from codecite_lsp.index.static_embedding import StaticEmbedder
from codecite_lsp.index.store import Store
from codecite_lsp.retrieve.retriever import Retriever


def _built(keep: Path) -> tuple[list[Query], Store, Config, StaticEmbedder]:
    """The corpus, index and default embedder in ``keep``, built on the first run."""
    listing = keep / "queries.json"
    config = Config(embedding="none", index_dir=str(keep / "index"))
    embedder_path = keep / "static.npz"
    if not listing.exists():
        from codecite_lsp.index.indexer import Indexer

        started = time.perf_counter()
        queries = build_corpus(keep / "stdlib")
        Indexer(keep / "stdlib", config).run()
        store = Store.open(keep / "index")
        embedder = StaticEmbedder(embedder_path)
        corpus = store.missing_vectors("training-corpus", 40_000)
        embedder.fit([text for _, text in corpus])
        fill_vectors(store, embedder)
        listing.write_text(json.dumps([asdict(q) for q in queries]))
        print(f"built {keep} in {time.perf_counter() - started:.0f} s")
    queries = [Query(**row) for row in json.loads(listing.read_text())]
    return queries, Store.open(keep / "index"), config, StaticEmbedder(embedder_path)


def _why(queries: list[Query], results: list[list[Result]]) -> Counter[str]:
    """Where the definition's chunk went when it was not first."""
    counts: Counter[str] = Counter()
    for query, found in zip(queries, results, strict=True):
        hit = [
            r.chunk.path == query.path and r.chunk.start_line <= query.line <= r.chunk.end_line
            for r in found
        ]
        same_file = [r.chunk.path == query.path for r in found]
        if hit and hit[0]:
            counts["first"] += 1
        elif not any(same_file):
            counts["file not in 10"] += 1
        elif not any(hit):
            counts["file listed, chunk not"] += 1
        elif same_file.index(True) < hit.index(True):
            counts["below another chunk of its file"] += 1
        else:
            counts["below other files"] += 1
    return counts


def _recording(
    run: Callable[[str], list[Result]], kept: list[list[Result]]
) -> Callable[[str], list[Result]]:
    """``run``, keeping each query's results (for ``--why``)."""

    def recorded(text: str) -> list[Result]:
        kept.append(run(text))
        return kept[-1]

    return recorded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, required=True, help="folder built once, then reused")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--why", action="store_true")
    parser.add_argument("--keyword", action="store_true", help="also the keyword-only rows")
    args = parser.parse_args()
    all_queries, store, config, embedder = _built(args.keep)
    queries = random.Random(args.seed).sample(all_queries, min(args.queries, len(all_queries)))
    hybrid = Retriever(store, embedder, config)
    systems = {"hybrid + rerank (ask)": by_retrieve(hybrid)}
    if args.keyword:
        keyword = Retriever(store, None, config)
        systems = {"keyword": by_search(keyword), "keyword + rerank": by_retrieve(keyword)}
        systems["hybrid + rerank (ask)"] = by_retrieve(hybrid)
    print("| system | file MRR | chunk R@1 | chunk R@10 | chunk MRR | s |")
    print("|---|---|---|---|---|---|")
    for name, run in systems.items():
        kept: list[list[Result]] = []
        scores: Scores = evaluate(queries, _recording(run, kept))
        chunk = scores.chunk_ranks
        print(
            f"| {name} | {_mrr(scores.file_ranks):.3f} | {_recall(chunk, 1):.3f} |"
            f" {_recall(chunk, 10):.3f} | {_mrr(chunk):.3f} | {scores.seconds:.0f} |"
        )
        if args.why:
            print("   ", dict(_why(queries, kept)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
