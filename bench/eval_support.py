"""Claim support on the labelled set: how many false claims the gate refuses, how many true
ones it wrongly refuses, per class of falsehood; with a model, the same figures once the
optional second pass (answer/support_check.py, ``support_check = "model"``) has judged every
claim the gate accepted.

    python bench/eval_support.py [tests/fixtures/support/*.jsonl ...] [--model MODEL]

Each claim goes through the real gate (verify/gate.py) as a one-claim reply citing its quote on
its lines of the snapshotted source, with its question (whose names count as given).
claims_subtle.jsonl (bench/build_subtle_claims.py) holds true claims and their subtle reversals
on the same quote: a reversed condition, a wrong default, reversed precedence, a reversed search
direction, "any" for some, a wrong count. "Positive" is a refusal: precision is the share of refused
claims that were false, recall the share of false claims refused.

The second pass runs when ``--model`` or ``CODECITE_MODEL`` names a litellm model (not
``extractive``): one call per accepted claim, through answer/llm.py as the answering pipeline
makes it (the provider's key in its usual variable). Offline, ``CODECITE_MOCK_RESPONSE`` scripts
the verdicts through litellm's ``mock_response`` (answer/llm.py): that measures the plumbing
(the verdict applied, a failure failing closed), not a model's judgement.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from file_replies import Pending, reply

from codecite_lsp.answer.llm import MOCK_ENV, MockReplies, complete
from codecite_lsp.answer.support_check import SCHEMA, check
from codecite_lsp.core.config import Config
from codecite_lsp.core.records import Source, outside_source
from codecite_lsp.verify.gate import GatePassed, verify

CLAIMS = sorted((Path(__file__).parents[1] / "tests" / "fixtures" / "support").glob("*.jsonl"))
TARGETS = ("number", "name", "literal", "negation", "quantifier")
SUBTLE = ("condition", "default", "precedence", "direction", "any_some", "count")


def gated(row: dict[str, Any], wording: bool = True) -> tuple[GatePassed | None, Source]:
    """The gate's verdict on the row's claim (None: refused), and its source; ``wording``
    False: as the pipeline runs it before the model's check (quantifiers, negations and
    counts in words left to that check)."""
    source = outside_source(**row["source"], text=row["source_text"])
    citation = {
        "source": source.label,
        "start_line": row["start_line"],
        "end_line": row["end_line"],
        "quote": row["quote"],
    }
    spans = [{"kind": "claim", "text": row["claim"], "citations": [citation]}]
    raw = json.dumps({"spans": spans, "refuse": None})
    result = verify(raw, [source], row["question"], wording)
    return (result if isinstance(result, GatePassed) else None), source


def second_pass(
    model: str,
    passed: GatePassed,
    source: Source,
    failed_closed: Counter[str],
    replies: tuple[Path, str] | None = None,
) -> bool:
    """Whether the claim the gate accepted survives the model's second pass (a failure removes it,
    as in the pipeline, and is counted by its error); ``replies``: the verdicts are read from
    that folder's files, written by whoever plays the model (file_replies.py), keyed by place."""

    defaults = Config()

    def ask(messages: list[dict[str, str]]) -> str:
        timeout, retries = defaults.model_timeout, defaults.model_retries
        scripted = None
        if replies is not None:
            scripted = MockReplies([reply(replies[0], replies[1], messages, SCHEMA)[1]])
        return complete(
            messages, model, timeout=timeout, retries=retries, schema=SCHEMA,
            mock_response=scripted,
        ).text  # fmt: skip

    checked = check(passed.spans, [source], ask)
    if checked.record["status"] == "failed_closed":
        failed_closed[checked.record["error"]] += 1
    return checked.claims_left > 0


def report(name: str, rows: list[dict[str, Any]], accepted: list[bool]) -> None:
    total: Counter[str] = Counter(row["cls"] for row in rows)
    passed: Counter[str] = Counter(row["cls"] for row, ok in zip(rows, accepted, strict=True) if ok)
    print(f"-- {name}")
    for row, ok in zip(rows, accepted, strict=True):
        if row["label"] and not ok:
            print(f"  true claim refused: {row['id']}: {row['claim']}")
        if not row["label"] and row["cls"] in TARGETS and ok:
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
    for cls in [*TARGETS, "meaning", *SUBTLE]:
        if not total[cls]:
            continue
        kind = "target" if cls in TARGETS else "not targeted"
        print(
            f"  {cls:<10} ({kind}): {total[cls] - passed[cls]} of {total[cls]} refused, "
            f"{passed[cls]} accepted"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("claims", nargs="*", type=Path, default=CLAIMS)
    parser.add_argument("--model", default=os.environ.get("CODECITE_MODEL", "extractive"))
    parser.add_argument(
        "--replies",
        type=Path,
        help="play the second pass's model from files in this folder (file_replies.py): each "
        "verdict's prompt is written to pending/ until its reply is in replies/",
    )
    args = parser.parse_args()
    rows = [
        json.loads(line)
        for path in args.claims
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    verdicts = [gated(row) for row in rows]
    report("the deterministic gate", rows, [passed is not None for passed, _ in verdicts])
    if args.model == "extractive":
        print("(no model named: --model or CODECITE_MODEL runs the second pass)")
        return
    failed_closed: Counter[str] = Counter()
    kept, pending = [], 0
    before_check = [gated(row, wording=False) for row in rows]
    for number, (passed, source) in enumerate(before_check, start=1):
        try:
            place = (args.replies, f"c{number:03d}") if args.replies else None
            kept.append(
                passed is not None and second_pass(args.model, passed, source, failed_closed, place)
            )
        except Pending:
            pending += 1
            kept.append(True)
    if pending:
        print(f"{pending} verdicts pending: their prompts are in {args.replies}/pending")
        return
    scripted = " (verdicts scripted by CODECITE_MOCK_RESPONSE)" if os.environ.get(MOCK_ENV) else ""
    if args.replies:
        scripted = f" (verdicts played from {args.replies})"
    report(f"the gate before the check, then the check by {args.model}{scripted}", rows, kept)
    calls = sum(passed is not None for passed, _ in before_check)
    opened = sum(failed_closed.values())
    print(
        f"second-pass calls: {calls}, failed closed: {opened} {dict(sorted(failed_closed.items()))}"
    )


if __name__ == "__main__":
    main()
