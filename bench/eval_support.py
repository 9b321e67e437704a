"""Claim support on the labelled set: how many false claims the gate refuses, how many true
ones it wrongly refuses, per class of falsehood.

    python bench/eval_support.py [tests/fixtures/support/claims.jsonl]

Each claim goes through the real gate (verify/gate.py) as a one-claim reply citing its quote on
its lines of the snapshotted source. "Positive" is a refusal: precision is the share of refused
claims that were false, recall the share of false claims refused.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from codecite_lsp.core.records import Source
from codecite_lsp.verify.gate import GatePassed, verify

CLAIMS = Path(__file__).parents[1] / "tests" / "fixtures" / "support" / "claims.jsonl"
TARGETS = ("number", "name", "literal", "negation", "quantifier")


def accepted(row: dict[str, Any]) -> bool:
    source = Source(**row["source"], text=row["source_text"])
    citation = {
        "source": source.label,
        "start_line": row["start_line"],
        "end_line": row["end_line"],
        "quote": row["quote"],
    }
    spans = [{"kind": "claim", "text": row["claim"], "citations": [citation]}]
    return isinstance(verify(json.dumps({"spans": spans, "refuse": None}), [source]), GatePassed)


def main(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    total: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    for row in rows:
        total[row["cls"]] += 1
        if accepted(row):
            passed[row["cls"]] += 1
        elif row["label"]:
            print(f"  true claim refused: {row['id']}: {row['claim']}")
    for row in rows:
        if not row["label"] and row["cls"] in TARGETS and accepted(row):
            print(f"  TARGET-CLASS FALSE CLAIM ACCEPTED: {row['id']}: {row['claim']}")
    false = [cls for cls in total if cls != "true"]
    refused_false = sum(total[c] - passed[c] for c in false)
    refused_true = total["true"] - passed["true"]
    refused = refused_false + refused_true
    repos = sorted({row["repository"].split()[0] for row in rows})
    print(
        f"claims: {len(rows)} ({total['true']} true, {sum(total[c] for c in false)} false) "
        f"from {len(repos)} repositories: {', '.join(repos)}"
    )
    print(
        f"true claims refused: {refused_true} of {total['true']} "
        f"({100.0 * refused_true / max(total['true'], 1):.1f}%)"
    )
    print(
        f"precision (refused claims that were false): {refused_false}/{refused} = "
        f"{refused_false / max(refused, 1):.3f}"
    )
    print(
        f"recall (false claims refused): {refused_false}/{sum(total[c] for c in false)} = "
        f"{refused_false / max(sum(total[c] for c in false), 1):.3f}"
    )
    for cls in [*TARGETS, "meaning"]:
        kind = "target" if cls in TARGETS else "not targeted"
        print(
            f"  {cls:<10} ({kind}): {total[cls] - passed[cls]} of {total[cls]} refused, "
            f"{passed[cls]} accepted"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else CLAIMS)
