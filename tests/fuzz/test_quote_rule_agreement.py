"""10,000 generated quotes over real files: the gate, citation resolution and MCP
``verify_citations`` give the same verdict on every one (issue 19 item 3). Its own tier: about a
minute of checking, kept out of the unit tier (which runs 300)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from quote_cases import Case, cases, judge

SEEN: list[bool] = []


@settings(
    max_examples=10_000, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
@given(cases())
def test_ten_thousand_quotes_get_one_verdict(case: Case) -> None:
    judged = judge(case)
    SEEN.append(judged.gate)
    assert judged.agree, (case.path, case.start_line, case.end_line, case.quote, judged)


def test_the_generated_quotes_cover_both_verdicts() -> None:
    # Run after the property above (file order): a generator that only made failing quotes
    # would agree trivially.
    if not SEEN:
        test_ten_thousand_quotes_get_one_verdict()
    assert len(SEEN) >= 10_000
    assert 0.2 < sum(SEEN) / len(SEEN) < 0.8, sum(SEEN)
