"""One quote rule: do the gate, citation resolution and MCP verify_citations agree?

    python bench/bench_quote_rule.py [--quotes 10000]

Generates quotes over real files with Hypothesis (tests/quote_cases.py: cut out of the cited
lines or lines near them, whole words or not, whitespace reshuffled, a few characters, whole lines,
text of its own) and asks each of the three whether the quote holds on the cited lines. Prints how
many quotes all three judged alike (the target: every one) and how many verified.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from hypothesis import HealthCheck, given, settings  # noqa: E402
from quote_cases import Case, Judged, cases, judge  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quotes", type=int, default=10_000)
    args = parser.parse_args()
    seen: list[tuple[Case, Judged]] = []

    @settings(
        max_examples=args.quotes,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(cases())
    def run(case: Case) -> None:
        seen.append((case, judge(case)))

    began = time.perf_counter()
    run()
    seconds = time.perf_counter() - began
    agree = sum(judged.agree for _, judged in seen)
    verified = sum(judged.gate for _, judged in seen)
    print(f"quotes generated: {len(seen)} over {len({c.path for c, _ in seen})} files")
    print(f"gate, resolution and MCP agree: {agree} of {len(seen)}")
    print(f"verified: {verified}, refused: {len(seen) - verified}")
    print(f"time: {seconds:.1f} s")
    for case, judged in [(c, j) for c, j in seen if not j.agree][:10]:
        print(f"  DISAGREE {case.path}:{case.start_line}-{case.end_line} {case.quote!r} {judged}")
    return 0 if agree == len(seen) else 1


if __name__ == "__main__":
    raise SystemExit(main())
