"""Each ranking rule of search judged on held-out folds of semble-dev (issue 39, items 3 and 4).

semble-dev's 13 repositories are split by language into two fixed folds (``FOLDS``; no language
is in both). Each repository is indexed once by semble-dev's own harness (``run.py``'s
``run_repo``, imported by path: its indexing, its scoring and its BM25 baseline, the default
row's figures are exactly the harness's); then only the queries are run again per variant, on
the same index, through the same in-process retriever and the harness's ``score``.

A variant is the ranking table with one rule group switched off (its neutral value) or set to one
alternative value: ``dataclasses.replace(WEIGHTS, ...)`` patched into every module of the
package that reads ``WEIGHTS`` for the variant's run (a benchmark-only patch). Every weight
search reads is read at query time (the index package never imports ``retrieve``): nothing is
indexed again. Three values are bound when their function or object is made and are patched
with the table: ``rrf``'s default ``k``, the retriever's ``vector_weight``, and the centrality
prior's cached percentiles (computed again for a variant of ``damping`` or ``max_definers``).

Reported per variant: each fold's files and chunk NDCG@10 (macro over its repositories, as
``aggregate.py``) and the delta against the default; BM25 (40-line windows) from the same run.
Then "fit on one fold, report on the other": per group, the value best on the fitting fold
(files NDCG@10; a gain under ``NEUTRAL`` keeps the default) and its score on the other fold,
both ways, with the fit-vs-fold gap (the chosen configuration's score on the fitting fold minus
its score on the other) and the optimism (its gain over the default on the fitting fold minus
its gain on the other); and every group's choice on one fold applied together, scored on both.

Run: ``PYTHONPATH=$PWD python bench/ablate_rules.py --scratch DIR [--out DIR/ablate.json]``
(about 7 minutes on 2 cores; ``--repos`` and ``--groups`` narrow it; ``--report FILE`` prints
an earlier run's tables again).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import statistics
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

METRICS = ("ndcg10_file", "ndcg10_chunk")
# A difference under this (files NDCG@10 on a fold) is noise: it neither changes a choice nor
# counts as a win.
NEUTRAL = 0.002
SEMBLE = Path(__file__).resolve().parents[2] / "shared" / "semble-dev"

# Fixed before any figure was looked at: the brief's split, by language.
FOLDS: dict[str, tuple[str, ...]] = {
    # go, python, java, c
    "A": ("chi", "gin", "aiohttp", "fastapi", "pydantic", "gson", "libuv"),
    # javascript, typescript, ruby, rust, kotlin, scala
    "B": ("express", "trpc", "rack", "axum", "ktor", "cats"),
}


@dataclass(frozen=True)
class Group:
    """A rule of search and the values it is tried at: ``off`` its neutral value (None: it has
    none), ``alternatives`` other values; each a set of ``Weights`` fields."""

    name: str
    rule: str
    off: Mapping[str, Any] | None
    alternatives: tuple[Mapping[str, Any], ...] = ()


def _scaled(table: Mapping[str, float], towards: float = 1.0) -> MappingProxyType[str, float]:
    """Each weight halfway to ``towards``."""
    return MappingProxyType({k: (v + towards) / 2 for k, v in table.items()})


def groups() -> list[Group]:
    from codecite_lsp.retrieve.weights import WEIGHTS

    ones = MappingProxyType(dict.fromkeys(WEIGHTS.fields, 1.0))
    no_role = MappingProxyType(dict.fromkeys(WEIGHTS.supporting, 1.0))
    return [
        Group("rrf_k", "rank fusion's constant", None, ({"rrf_k": 10}, {"rrf_k": 200})),
        # off: no vector hit clears a cosine above 1 (the leg gives no candidates at all)
        Group("vector", "the vector leg (PPMI)", {"min_similarity": 1.01}, ({"vector": 1.0},)),
        Group(
            "meaning",
            "the semantic leg (MiniLM, after the rules)",
            {"meaning": 0.0, "meaning_named": 0.0},
            (
                {"meaning": 1.0, "meaning_named": 0.6},
                {"meaning": 2.0, "meaning_named": 1.0},
                {"meaning_rules_k": 30},
                {"meaning_rules_k": 60, "meaning": 1.0, "meaning_named": 0.6},
            ),
        ),
        Group("fields_fusion", "the BM25F leg", {"fields_fusion": 0.0}, ({"fields_fusion": 1.0},)),
        Group("fields", "BM25F field weights", {"fields": ones}, ({"fields_k1": 1.2},)),
        Group(
            "named_lift",
            "a query word naming a definition",
            {"named_lift": 1.0},
            ({"named_lift": 1.6},),
        ),
        Group(
            "defines_lift",
            "a typed name's definition",
            {"defines_lift": 1.0},
            ({"defines_lift": 3.0},),
        ),
        Group(
            "supporting",
            "code first (test, doc, ... weights)",
            {"supporting": no_role},
            ({"supporting": _scaled(WEIGHTS.supporting)},),
        ),
        Group(
            "lookup_miss",
            "a look-up's chunk without the name",
            {"lookup_miss": 1.0},
            ({"lookup_miss": 0.25},),
        ),
        Group(
            "file_name", "a file named for the query", {"file_name": 0.0}, ({"file_name": 0.35},)
        ),
        Group("legacy", "old or duplicate trees", {"legacy": 1.0}),
        Group(
            "centrality",
            "the PageRank prior",
            {"centrality_lift": 0.0},
            ({"centrality_lift": 0.44},),
        ),
        Group(
            "file_share",
            "another good chunk in the file",
            {"file_share": 0.0},
            ({"file_share": 0.4},),
        ),
        Group(
            "neighbours",
            "chunks beside the best",
            {"neighbour_share": 0.0},
            ({"neighbour_share": 0.3},),
        ),
        Group(
            "description",
            "a docstring chunk below its body",
            {"description": 1.0},
            ({"description": 0.7},),
        ),
        Group(
            "file_repeat",
            "each further chunk of a file",
            {"file_repeat": 1.0},
            ({"file_repeat": 0.6},),
        ),
    ]


def load_harness(semble: Path) -> ModuleType:
    """semble-dev's run.py, imported by path (its code is the harness's, not copied)."""
    spec = importlib.util.spec_from_file_location("semble_run", semble / "run.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"no run.py in {semble}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@contextmanager
def weights_as(changes: Mapping[str, Any], retriever: Any) -> Iterator[None]:
    """The ranking table with ``changes`` in every module that reads it, for the block."""
    from codecite_lsp.retrieve import scoring
    from codecite_lsp.retrieve.weights import WEIGHTS

    table = dataclasses.replace(WEIGHTS, **changes)
    readers = [
        m
        for n, m in list(sys.modules.items())
        if n.startswith("codecite_lsp.") and getattr(m, "WEIGHTS", None) is WEIGHTS
    ]
    graph = {"damping", "max_definers"} & set(changes)
    for module in readers:
        module.WEIGHTS = table  # type: ignore[attr-defined]
    scoring.rrf.__defaults__ = (table.rrf_k, None)
    retriever.vector_weight = table.vector
    if graph:
        retriever.prior._current = None  # the percentiles computed again with the variant's
    try:
        yield
    finally:
        for module in readers:
            module.WEIGHTS = WEIGHTS  # type: ignore[attr-defined]
        scoring.rrf.__defaults__ = (WEIGHTS.rrf_k, None)
        retriever.vector_weight = WEIGHTS.vector
        if graph:
            retriever.prior._current = None


def variants(chosen: list[Group]) -> dict[str, dict[str, Any]]:
    """Variant name -> its changes to the table ("default": none)."""
    out: dict[str, dict[str, Any]] = {"default": {}}
    for group in chosen:
        if group.off is not None:
            out[f"{group.name}:off"] = dict(group.off)
        for alt in group.alternatives:
            out[f"{group.name}:" + ",".join(f"{k}={_show(v)}" for k, v in alt.items())] = dict(alt)
    return out


def _show(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + " ".join(f"{k}:{v:g}" for k, v in value.items()) + "}"
    return f"{value:g}"


def open_engine(harness: ModuleType, name: str, args: argparse.Namespace, rev: str) -> tuple:
    """The harness's in-process retriever over the index its run left, and the path prefix."""
    scratch = Path(args.scratch).resolve()
    root = harness.REPOS[name][3]
    checkout = harness.materialize(name, scratch, Path(args.mirrors), rev)
    bdir = checkout / root if root else checkout
    prefix = (root.rstrip("/") + "/") if root else ""
    return harness.CodeciteInProcess(bdir, scratch / "idx" / name), prefix


def figures_of(
    harness: ModuleType, engine: Any, prefix: str, tasks: list[dict], changes: Mapping[str, Any]
) -> dict[str, float]:
    """The repository's mean files and chunk NDCG@10 with ``changes`` to the table."""
    with weights_as(changes, engine.retriever):
        scored = [
            harness.score([(prefix + p, s, e) for p, s, e in engine.search(t["query"])], t)
            for t in tasks
        ]
    return {m: statistics.mean(s[m] for s in scored) for m in METRICS}


def run_variants(
    harness: ModuleType,
    name: str,
    tasks: list[dict],
    args: argparse.Namespace,
    table: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """One repository: the harness's run (index, default, BM25), then each variant's queries."""
    t0 = time.perf_counter()
    res = harness.run_repo(name, tasks, args)
    engine, prefix = open_engine(harness, name, args, res["revision"])
    figures = {v: figures_of(harness, engine, prefix, tasks, c) for v, c in table.items()}
    summary = res["summary"]
    same = all(abs(figures["default"][m] - summary["codecite"][m]) < 1e-9 for m in METRICS)
    print(
        f"{name:<9} q={len(tasks):>3} default {figures['default']['ndcg10_file']:.3f}"
        f" (harness {summary['codecite']['ndcg10_file']:.3f}{'' if same else ' DIFFERS'})"
        f" bm25 {summary['bm25_window']['ndcg10_file']:.3f}"
        f"  {time.perf_counter() - t0:.0f}s",
        file=sys.stderr,
        flush=True,
    )
    return {
        "revision": res["revision"],
        "variants": figures,
        **{
            k: {m: summary[k][m] for m in METRICS} for k in ("codecite", "bm25_window", "bm25_file")
        },
        "harness_agrees": same,
    }


def fold_mean(per_repo: dict[str, Any], fold: str, pick: Any) -> float:
    return statistics.mean(pick(per_repo[r]) for r in FOLDS[fold] if r in per_repo)


def report(per_repo: dict[str, Any], table: dict[str, dict[str, Any]], chosen: list[Group]) -> dict:
    def score(variant: str, fold: str, metric: str = "ndcg10_file") -> float:
        return fold_mean(per_repo, fold, lambda r: r["variants"][variant][metric])

    print(
        "\n| variant | A files | A chunks | B files | B chunks | dA files | dB files |"
        " dA chunks | dB chunks |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, key in (("BM25 windows", "bm25_window"), ("BM25 files", "bm25_file")):
        a_f, b_f = (fold_mean(per_repo, f, lambda r, k=key: r[k]["ndcg10_file"]) for f in "AB")
        a_c, b_c = (fold_mean(per_repo, f, lambda r, k=key: r[k]["ndcg10_chunk"]) for f in "AB")
        print(f"| {label} | {a_f:.3f} | {a_c:.3f} | {b_f:.3f} | {b_c:.3f} | | | | |")
    base = {(f, m): score("default", f, m) for f in "AB" for m in ("ndcg10_file", "ndcg10_chunk")}
    rows = {}
    for variant in table:
        vals = {(f, m): score(variant, f, m) for f in "AB" for m in ("ndcg10_file", "ndcg10_chunk")}
        rows[variant] = {f"{f}_{m}": v for (f, m), v in vals.items()}
        d = {k: vals[k] - base[k] for k in vals}
        print(
            f"| {variant} | {vals['A', 'ndcg10_file']:.3f} | {vals['A', 'ndcg10_chunk']:.3f}"
            f" | {vals['B', 'ndcg10_file']:.3f} | {vals['B', 'ndcg10_chunk']:.3f}"
            f" | {d['A', 'ndcg10_file']:+.3f} | {d['B', 'ndcg10_file']:+.3f}"
            f" | {d['A', 'ndcg10_chunk']:+.3f} | {d['B', 'ndcg10_chunk']:+.3f} |"
        )

    print(
        "\nFit on one fold (files NDCG@10, best of default / off / alternatives; a gain under"
        f" {NEUTRAL} keeps the default), report on the other:"
    )
    print("| group | fit on | chosen | fit fold | other fold | gap | gap <= 0.03 | optimism |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    fits: dict[str, dict[str, Any]] = {}
    print(
        f"(the default's own gap, A minus B: {score('default', 'A') - score('default', 'B'):+.3f};"
        " optimism: the gain on the fitting fold minus the gain on the other)"
    )
    for group in chosen:
        options = [v for v in table if v == "default" or v.split(":")[0] == group.name]
        for fit, other in (("A", "B"), ("B", "A")):
            best = max(options, key=lambda v: score(v, fit))
            if score(best, fit) - score("default", fit) < NEUTRAL:
                best = "default"
            on_fit, on_other = score(best, fit), score(best, other)
            gap = on_fit - on_other
            optimism = (on_fit - score("default", fit)) - (on_other - score("default", other))
            fits.setdefault(group.name, {})[fit] = {
                "chosen": best,
                "fit": on_fit,
                "other": on_other,
                "gap": gap,
                "optimism": optimism,
            }
            print(
                f"| {group.name} | {fit} | {best} | {on_fit:.3f} | {on_other:.3f} | {gap:+.3f}"
                f" | {'yes' if abs(gap) <= 0.03 else 'no'} | {optimism:+.3f} |"
            )

    print(f"\nVerdict per rule (switching it off; |delta| < {NEUTRAL}: neutral):")
    verdicts = {}
    for group in chosen:
        said = []
        for metric, label in (("ndcg10_file", "files"), ("ndcg10_chunk", "chunks")):
            if group.off is None:
                better = [
                    f
                    for f in "AB"
                    if all(
                        score("default", f, metric) - score(v, f, metric) >= NEUTRAL
                        for v in table
                        if v.split(":")[0] == group.name
                    )
                ]
                said.append(f"{label}: the default beats its alternatives on {_folds(better)}")
                continue
            off = f"{group.name}:off"
            gain = {f: score("default", f, metric) - score(off, f, metric) for f in "AB"}
            wins = [f for f in "AB" if gain[f] >= NEUTRAL]
            loses = [f for f in "AB" if -gain[f] >= NEUTRAL]
            said.append(
                f"{label}: wins on {_folds(wins)}"
                + (f", loses on {_folds(loses)}" if loses else "")
            )
        verdicts[group.name] = "; ".join(said)
        print(f"- {group.name} ({group.rule}): {verdicts[group.name]}")
    return {"rows": rows, "fits": fits, "verdicts": verdicts}


def _folds(folds: list[str]) -> str:
    return {0: "neither fold", 1: f"one fold ({folds[0] if folds else ''})", 2: "both folds"}[
        len(folds)
    ]


def joint(fits: dict[str, dict[str, Any]], table: dict[str, dict[str, Any]], fold: str) -> dict:
    """Every group's choice on ``fold``, applied together."""
    changes: dict[str, Any] = {}
    for fit in fits.values():
        changes.update(table[fit[fold]["chosen"]])
    return changes


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scratch", required=True, help="a writable folder: trees and indexes")
    ap.add_argument("--semble", default=str(SEMBLE), help="semble-dev's folder")
    ap.add_argument("--repos", default=",".join(FOLDS["A"] + FOLDS["B"]))
    ap.add_argument("--groups", default="", help="comma-separated group names (default: all)")
    ap.add_argument("--out", default="", help="write every figure here (JSON)")
    ap.add_argument("--report", default="", help="print the tables of an earlier --out again")
    args = ap.parse_args()
    harness = load_harness(Path(args.semble))
    wanted = set(filter(None, args.groups.split(",")))
    chosen = [g for g in groups() if not wanted or g.name in wanted]
    table = variants(chosen)
    run_args = argparse.Namespace(scratch=args.scratch, mirrors="", nearest=False, cli_check=set())
    per_repo: dict[str, Any] = {}
    if args.report:  # the figures of an earlier run (--out), printed again
        per_repo = json.loads(Path(args.report).read_text("utf-8"))["per_repo"]
    started = time.perf_counter()
    for name in filter(None, args.repos.split(",")):
        if name not in per_repo:
            tasks = json.loads(
                (Path(args.semble) / "annotations" / f"{name}.json").read_text("utf-8")
            )
            per_repo[name] = run_variants(harness, name, tasks, run_args, table)
    print(
        f"\n{len(table)} variants over {len(per_repo)} repositories in"
        f" {time.perf_counter() - started:.0f} s",
        file=sys.stderr,
    )
    out = report(per_repo, table, chosen)
    # Every group's choice on one fold applied together, scored on both (the indexes are reused).
    fitted = {fold: joint(out["fits"], table, fold) for fold in "AB"}
    for name in per_repo:
        if all(f"joint:{fold}" in per_repo[name]["variants"] for fold in fitted):
            continue
        tasks = json.loads((Path(args.semble) / "annotations" / f"{name}.json").read_text("utf-8"))
        engine, prefix = open_engine(harness, name, run_args, per_repo[name]["revision"])
        for fold, changes in fitted.items():
            per_repo[name]["variants"][f"joint:{fold}"] = figures_of(
                harness, engine, prefix, tasks, changes
            )
    print("\nEvery group's choice on one fold applied together:")
    print("| fitted on | changes | fit fold | other fold | gap | gain on fit | gain on other |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    joint_rows = {}
    for fold, other in (("A", "B"), ("B", "A")):
        v = f"joint:{fold}"
        on_fit = fold_mean(per_repo, fold, lambda r, v=v: r["variants"][v]["ndcg10_file"])
        on_other = fold_mean(per_repo, other, lambda r, v=v: r["variants"][v]["ndcg10_file"])
        d_fit = on_fit - fold_mean(
            per_repo, fold, lambda r: r["variants"]["default"]["ndcg10_file"]
        )
        d_other = on_other - fold_mean(
            per_repo, other, lambda r: r["variants"]["default"]["ndcg10_file"]
        )
        shown = ", ".join(f"{k}={_show(c)}" for k, c in fitted[fold].items()) or "none"
        joint_rows[fold] = {"changes": shown, "fit": on_fit, "other": on_other}
        print(
            f"| {fold} | {shown} | {on_fit:.3f} | {on_other:.3f} | {on_fit - on_other:+.3f}"
            f" | {d_fit:+.3f} | {d_other:+.3f} |"
        )
    out["joint"] = joint_rows
    if args.out:
        Path(args.out).write_text(
            json.dumps({"folds": FOLDS, "per_repo": per_repo, **out}, indent=1, default=str) + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
