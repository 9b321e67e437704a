"""File-then-chunk ranking on semble-dev's language folds (issue 39, item 3).

Rank files first, then the best chunks inside them, from the default ranking's own deeper list.
Each repository is indexed once by semble-dev's harness (``ablate_rules``'s machinery: its
``run_repo``, folds, fold means); the default and BM25 figures are that run's. Then each query
is searched again on the same index with ``--depth`` results (``Retriever.search``, as the
harness calls it), and every variant is computed from that list alone, in memory:

- a chunk's score is its evidence: its score's ledger terms without ``file_repeat`` and
  ``scale`` (the product's own demotion of a file's further chunks, which this replaces);
- a file's score aggregates its chunks' scores, best first (s0 >= s1 >= ...): ``max`` (s0),
  ``top2`` (s0 + w * s1), ``decay`` (sum of d**i * s_i), or ``top2own`` (s0 + w * s1 on the
  chunks' own scores: the evidence without the ``file_share`` term, whose lift from the file's
  other best chunk the aggregate then replaces; chunks also ordered by it); files in that order
  (ties: first seen in the list);
- the layout: ``all`` (all of a file's chunks, best first, before the next file's), ``best1`` /
  ``best2`` (each file's best one / two in file order, then the rest of each file, file order);
- cut to the harness's ``SEARCH_LIMIT`` (50) and scored by the harness's ``score``.

A parameter is fitted on one fold (``--fit``: the mean of files and chunks NDCG@10 by default)
and reported on the other, both ways, with the fit-vs-fold gap (the fitting fold's score minus
the other's) and the optimism (the gain over the default on the fitting fold minus the gain on
the other). A win is a held-out gain over the default of at least ``NEUTRAL``.

Run: ``nice -n 10 env PYTHONPATH=$PWD python bench/file_then_chunk.py --scratch /tmp/ftc
--out /tmp/ftc/ftc.json`` (``--report /tmp/ftc/ftc.json`` prints an earlier run's tables again,
``--repos`` narrows it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from ablate_rules import FOLDS, METRICS, NEUTRAL, SEMBLE, fold_mean, load_harness, open_engine

AGGREGATES: dict[str, tuple[float | None, ...]] = {
    "max": (None,),
    "top2": (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0),
    "decay": (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0),
    "top2own": (0.05, 0.1, 0.2, 0.3, 0.5, 1.0),
}
LAYOUTS = {"all": None, "best1": 1, "best2": 2}
NOT_EVIDENCE = {"file_repeat", "scale"}
FILE_TERM = "file"  # the ledger's name for ``file_share``: another good chunk in the file


def deep_lists(harness: Any, name: str, tasks: list[dict], args: Any, depth: int) -> dict:
    """One repository: the harness's run, then each query's ``depth`` results with evidence."""
    t0 = time.perf_counter()
    res = harness.run_repo(name, tasks, args)
    engine, prefix = open_engine(harness, name, args, res["revision"])
    lists = []
    for task in tasks:
        rows = []
        for r in engine.retriever.search(task["query"], limit=depth):
            terms = dict(r.terms)
            if abs(sum(terms.values()) - r.score) > 1e-6:
                raise RuntimeError(f"{name}: terms do not add up to the score")
            evidence = sum(v for k, v in terms.items() if k not in NOT_EVIDENCE)
            own = evidence - terms.get(FILE_TERM, 0.0)
            rows.append((prefix + r.to_json()["path"], r.start_line, r.end_line, evidence, own))
        lists.append(rows)
    summary = res["summary"]
    print(
        f"{name:<9} q={len(tasks):>3} default {summary['codecite']['ndcg10_file']:.3f}"
        f" bm25 {summary['bm25_window']['ndcg10_file']:.3f} {time.perf_counter() - t0:.0f}s",
        file=sys.stderr,
        flush=True,
    )
    return {"revision": res["revision"], "summary": summary, "lists": lists}


def rerank(rows: list, aggregate: str, param: float | None, per_file: int | None) -> list:
    col = 4 if aggregate == "top2own" else 3
    files: dict[str, list] = {}
    for row in rows:
        files.setdefault(row[0], []).append(row)
    for chunks in files.values():
        chunks.sort(key=lambda r: -r[col])

    def value(chunks: list) -> float:
        s = [c[col] for c in chunks]
        if aggregate == "max":
            return s[0]
        if aggregate in ("top2", "top2own"):
            return s[0] + param * (s[1] if len(s) > 1 else 0.0)
        return sum(param**i * v for i, v in enumerate(s))

    order = sorted(files.values(), key=value, reverse=True)  # stable: first seen first
    if per_file is None:
        return [c for f in order for c in f]
    return [c for f in order for c in f[:per_file]] + [c for f in order for c in f[per_file:]]


def figures(harness: Any, per_repo: dict, tasks: dict, pick: Any) -> dict[str, dict]:
    """Per repository, the mean files and chunk NDCG@10 of ``pick(rows)`` cut to 50."""
    out = {}
    for name, data in per_repo.items():
        scored = [
            harness.score([tuple(r[:3]) for r in pick(rows)][: harness.SEARCH_LIMIT], t)
            for rows, t in zip(data["lists"], tasks[name], strict=True)
        ]
        out[name] = {m: statistics.mean(s[m] for s in scored) for m in METRICS}
    return out


def report(harness: Any, per_repo: dict, tasks: dict, fit_on: str) -> dict:
    rows: dict[str, dict] = {}  # label -> per-repository figures

    def fold(label: str, f: str, m: str) -> float:
        return fold_mean(rows[label], f, lambda r: r[m])

    for key, label in (
        ("codecite", "default"),
        ("bm25_window", "BM25 40-line windows"),
        ("bm25_file", "BM25 whole files"),
    ):
        rows[label] = {n: d["summary"][key] for n, d in per_repo.items()}
    rows["default, deep list cut to 50"] = figures(harness, per_repo, tasks, lambda r: r)
    for agg, params in AGGREGATES.items():
        for lay, per_file in LAYOUTS.items():
            for p in params:
                rows[f"{agg}/{lay}" + ("" if p is None else f" {p:g}")] = figures(
                    harness, per_repo, tasks, lambda r, a=agg, p=p, k=per_file: rerank(r, a, p, k)
                )

    def objective(label: str, f: str) -> float:
        files, chunks = fold(label, f, "ndcg10_file"), fold(label, f, "ndcg10_chunk")
        return {"files": files, "chunks": chunks, "both": (files + chunks) / 2}[fit_on]

    print(
        "\n| ranking | A files | A chunks | B files | B chunks |\n| --- | --- | --- | --- | --- |"
    )
    for label in rows:
        print(
            f"| {label} | "
            + " | ".join(f"{fold(label, f, m):.3f}" for f in "AB" for m in METRICS)
            + " |"
        )

    print(f"\nFitted on one fold ({fit_on}), reported on the other (Δ: against the default):")
    print(
        "| variant | fit on | param | fit files | fit chunks | held-out files (Δ) |"
        " held-out chunks (Δ) | gap files | optimism files | optimism chunks |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    fits: dict[str, dict] = {}
    for agg, params in AGGREGATES.items():
        for lay in LAYOUTS:
            family = f"{agg}/{lay}"
            labels = [family + ("" if p is None else f" {p:g}") for p in params]
            for fit, other in (("A", "B"), ("B", "A")):
                best = max(labels, key=lambda lab, f=fit: objective(lab, f))
                d = {
                    (f, m): fold(best, f, m) - fold("default", f, m) for f in "AB" for m in METRICS
                }
                opt = {m: d[fit, m] - d[other, m] for m in METRICS}
                held = {m: fold(best, other, m) for m in METRICS}
                gap = fold(best, fit, "ndcg10_file") - held["ndcg10_file"]
                fits.setdefault(family, {})[fit] = {
                    "chosen": best,
                    "held_out": held,
                    "delta": {m: d[other, m] for m in held},
                    "gap_files": gap,
                    "optimism": opt,
                }
                print(
                    f"| {family} | {fit} | {best[len(family) :].strip() or '-'}"
                    + "".join(f" | {fold(best, fit, m):.3f}" for m in METRICS)
                    + f" | {held['ndcg10_file']:.3f} ({d[other, 'ndcg10_file']:+.3f})"
                    f" | {held['ndcg10_chunk']:.3f} ({d[other, 'ndcg10_chunk']:+.3f})"
                    f" | {gap:+.3f} | {opt['ndcg10_file']:+.3f} | {opt['ndcg10_chunk']:+.3f} |"
                )
    print(f"\nWins (held-out gain >= {NEUTRAL}) on both folds for files and chunks:")
    winners = [
        fam
        for fam, fit in fits.items()
        if all(fit[f]["delta"][m] >= NEUTRAL for f in "AB" for m in METRICS)
    ]
    for fam in winners or ["none"]:
        print(
            f"- {fam}"
            + (
                ""
                if fam == "none"
                else ": "
                + ", ".join(
                    f"fitted {f} -> {fits[fam][f]['delta']['ndcg10_file']:+.3f} files,"
                    f" {fits[fam][f]['delta']['ndcg10_chunk']:+.3f} chunks"
                    for f in "AB"
                )
            )
        )
    return {"rows": rows, "fits": fits, "winners": winners}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scratch", required=True, help="a writable folder: trees and indexes")
    ap.add_argument("--semble", default=str(SEMBLE), help="semble-dev's folder")
    ap.add_argument("--repos", default=",".join(FOLDS["A"] + FOLDS["B"]))
    ap.add_argument("--depth", type=int, default=100, help="results per query the variants read")
    ap.add_argument("--fit", choices=("files", "chunks", "both"), default="both")
    ap.add_argument("--out", default="", help="write every figure and list here (JSON)")
    ap.add_argument("--report", default="", help="print the tables of an earlier --out again")
    args = ap.parse_args()
    harness = load_harness(Path(args.semble))
    run_args = argparse.Namespace(scratch=args.scratch, mirrors="", nearest=False, cli_check=set())
    names = list(filter(None, args.repos.split(",")))
    tasks = {
        n: json.loads((Path(args.semble) / "annotations" / f"{n}.json").read_text("utf-8"))
        for n in names
    }
    per_repo = json.loads(Path(args.report).read_text("utf-8"))["per_repo"] if args.report else {}
    started = time.perf_counter()
    for name in names:
        if name not in per_repo:
            per_repo[name] = deep_lists(harness, name, tasks[name], run_args, args.depth)
    print(
        f"\n{len(per_repo)} repositories in {time.perf_counter() - started:.0f} s", file=sys.stderr
    )
    out = report(harness, {n: per_repo[n] for n in names}, tasks, args.fit)
    if args.out:
        Path(args.out).write_text(
            json.dumps(
                {"folds": FOLDS, "depth": args.depth, "fit": args.fit, "per_repo": per_repo, **out},
                default=str,
            )
            + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
