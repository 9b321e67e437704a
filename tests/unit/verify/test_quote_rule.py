"""One quote rule: the gate, citation resolution and MCP ``verify_citations`` agree on every
generated quote over real files (10,000 of them in the fuzz tier and bench/bench_quote_rule.py)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from quote_cases import Case, cases, judge

from codecite_lsp.verify.quotes import quote_problem, quote_ranges


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_the_gate_resolution_and_mcp_agree_on_generated_quotes(case: Case) -> None:
    judged = judge(case)
    assert judged.agree, (case.path, case.start_line, case.end_line, case.quote, judged)


def test_what_holds_where() -> None:
    lines = ["def verify(raw, sources):", "    pass", "    return e"]
    assert quote_problem("def verify(raw,\n sources):", lines[:1]) is None
    assert quote_problem(" verify(r", lines) == "quote_cuts_token"
    assert quote_problem("e", lines) == "quote_too_trivial"
    assert quote_problem("pass", lines) is None  # a short line quoted whole
    assert quote_problem("pass", lines[:1]) == "quote_not_held"
    assert quote_problem(" \n ", lines) == "empty_quote"
    # Re-anchoring finds only where the quote holds: "e" is in every line, and holds on none.
    assert quote_ranges(lines, "e") == []
    assert quote_ranges(lines, "pass") == [(2, 2)]
    assert quote_ranges(lines, "verify(raw, sources): pass") == [(1, 2)]
