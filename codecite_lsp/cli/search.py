"""``codecite search``: retrieval only, no model; a repository never indexed gets its keyword
index first and its vectors after the results.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.config import Config
from ..core.limits import MAX_TEXT_CHARS
from ..ingest.injection import kinds
from .common import ProgressBar, run_index, say_base, why_index_first

if TYPE_CHECKING:
    from ..core.records import Finding, Result
    from ..index.indexer import Indexer


def _untrusted_mark(found: tuple[Finding, ...]) -> str:
    """A search result's line marking text addressed to an AI model."""
    lines = ", ".join(str(line) for line in dict.fromkeys(f.line for f in found))
    return (
        f"    UNTRUSTED: text addressed to an AI model ({', '.join(kinds(found))}) at line {lines}"
    )


def _search_queries(args: argparse.Namespace) -> list[str] | str:
    """The queries to answer, or what is wrong with them."""
    if (args.query is None) == (args.queries is None):
        return "give a query or --queries FILE (not both)"
    if args.query is not None:
        return [args.query] if args.query.strip() else "the query is empty"
    try:
        if args.queries == "-":
            text = sys.stdin.read()
        else:
            text = Path(args.queries).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read {args.queries}: {exc}"
    queries = [line.strip() for line in text.splitlines() if line.strip()]
    if any(len(query) > MAX_TEXT_CHARS for query in queries):
        return f"{args.queries} holds a query longer than {MAX_TEXT_CHARS} characters"
    return queries or f"{args.queries} holds no query"


def _first_keyword_pass(repo: Path, config: Config, why: str) -> Indexer | None:
    """A repository never indexed (or whose index must be rebuilt): its keyword index, so that
    the first search answers from it at once (the vectors are filled after the results:
    ``_fill_behind``). None if another process holds the index (it is building it: the search
    reads what is there)."""
    from ..index.indexer import IndexBusy, Indexer

    if why:
        print(f"codecite: {why}", file=sys.stderr)
    indexer = Indexer(repo, config)
    try:
        report = run_index(indexer, quiet=False, vectors=False)
    except IndexBusy as exc:
        print(f"codecite: {exc}", file=sys.stderr)
        return None
    print(report.summary(), file=sys.stderr)  # stdout holds the results only
    return indexer


def _fill_behind(indexer: Indexer) -> int:
    """After a first search's results: the rest of the index (vectors), so the next search is
    hybrid. Standard output is closed first: a reader of the results (a pipe, ``--json``)
    has them all, and its end, now. The exit status: 130 if interrupted (nothing is lost: the
    next command that indexes fills the vectors)."""
    sys.stdout.flush()
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    from ..index.indexer import IndexBusy

    bar = ProgressBar(True)  # on a terminal: why the prompt has not come back yet
    try:
        indexer.run(progress=bar)  # every file unchanged since the keyword pass: the vectors
    except IndexBusy as exc:  # another process took the index meanwhile and goes on with it
        print(f"codecite: vectors not filled: {exc}", file=sys.stderr)
    except KeyboardInterrupt:  # the results are out: no traceback over them
        bar.close()
        print("codecite: interrupted; the next index pass fills the vectors", file=sys.stderr)
        return 130
    bar.close()
    return 0


def cmd_search(args: argparse.Namespace, repo: Path, config: Config) -> int:
    """Print the ranked chunks of each query (text or JSON lines), no model asked."""
    from ..retrieve.retriever import open_retriever

    queries = _search_queries(args)
    if isinstance(queries, str):
        print(f"codecite: {queries}", file=sys.stderr)
        return 2
    say_base(repo, config)
    why = why_index_first(repo, config)
    first = None if why is None else _first_keyword_pass(repo, config, why)
    retriever = open_retriever(repo, config)
    if retriever.store.meta.chunk_budget is None:  # still none: another process is building it
        # stderr: an empty result list alone reads as "nothing matches"
        print("codecite: no index yet; run `codecite index` first", file=sys.stderr)
    batch = args.queries is not None
    for query in queries:
        results = retriever.results(query, limit=args.limit)
        if args.json:
            shown = [_result_json(r, args.explain) for r in results]
            line: dict[str, object] = {"query": query} if batch else {}
            print(json.dumps({**line, "results": shown}, ensure_ascii=False), flush=batch)
            continue
        if batch:
            print(f"# {query}")
        if not results:
            print("no results")
        for result in results:
            symbol = f"  {result.chunk.symbol}" if result.chunk.symbol else ""
            place = f"{result.chunk.path}:{result.chunk.start_line}-{result.chunk.end_line}"
            print(f"{place}{symbol}  ({result.score:.3f})")
            if result.chunk.untrusted:
                print(_untrusted_mark(result.chunk.untrusted))
            if args.explain:
                print("    " + "  ".join(f"{name} {value:+.3f}" for name, value in result.terms))
    return 0 if first is None else _fill_behind(first)


def _result_json(result: Result, explain: bool) -> dict[str, object]:
    from ..core.responses import SearchResult

    shown: dict[str, object] = SearchResult.of(result).model_dump(mode="json")
    if explain:
        shown["terms"] = dict(result.terms)
    return shown
