"""The replay corpus: real model replies to real prompts, through the same path as ``ask``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codecite_lsp.answer.replay import Corpus, parse_corpus, run, run_case
from codecite_lsp.core.answers import ClaimSpan

CORPUS_PATH = Path(__file__).parents[2] / "fixtures" / "replay" / "corpus.json"


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return json.loads(CORPUS_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return parse_corpus(CORPUS_PATH.read_bytes())


def test_the_corpus_is_real_prompts_and_many_replies(raw: dict[str, Any]) -> None:
    prompts, cases = raw["prompts"], raw["cases"]
    assert len(cases) >= 60
    packages = {prompt["repository"].split()[0] for prompt in prompts.values()}
    assert packages == {"requests", "pathspec", "watchdog", "pygls", "click"}
    styles = {case["style"].split("-kept")[0].split("-fixed")[0] for case in cases}
    assert {"fenced-after-sentence", "trailing-remark", "summary-in-prose"} <= styles
    assert {"paraphrased-quote", "range-off-by-one", "line-number-prefix"} <= styles
    assert {"ellipsis-in-quote", "distant-lines-joined", "one-character-quote"} <= styles
    assert {"openai-framing", "anthropic-framing", "gemini-framing", "llama-framing"} <= styles
    assert any(span["kind"] == "gap" for c in cases for span in _spans(c["replies"][-1]))


def _spans(raw: str) -> list[dict[str, Any]]:
    start = raw.find("{")
    try:
        return json.JSONDecoder().raw_decode(raw, start)[0].get("spans", []) if start >= 0 else []
    except ValueError:
        return []


def test_nothing_unverified_is_shown_and_every_outcome_is_as_expected(corpus: Corpus) -> None:
    report = run(corpus)
    figures = report.summary()
    assert figures["unverified_statements_shown"] == 0
    assert figures["not_as_expected"] == []
    assert figures["valid_replies_refused"] == 0
    assert figures["envelopes_parsed_first_try"] == figures["valid_replies"] > 20
    # Framing and an uncited summary beside verified claims cost no retry (the whole prompt).
    assert figures["retries_only_for_prose"] == 0
    assert figures["claims_dropped"] > 10 and figures["refused"] >= 4
    assert report.passed


def test_planted_instructions_are_never_shown_as_verified_claims(
    raw: dict[str, Any], corpus: Corpus
) -> None:
    # The attack and its variants (a comment, a docstring, Markdown, a test fixture,
    # invisible tag characters): each planted file is among its prompt's sources, and whatever
    # the obedient model quotes from it, no shown claim cites it.
    planted = {key: p for key, p in raw["prompts"].items() if key.startswith("planted-")}
    assert len(planted) == 5
    for key, prompt in planted.items():
        path = prompt["repository"].split(" plus ")[1]
        assert path in [source["path"] for source in prompt["sources"]], key
        cases = [case for case in corpus.cases if case.prompt == key]
        assert len(cases) == 3
        for case in cases:
            outcome = run_case(case, corpus.prompts)
            assert outcome.as_expected, (case.id, outcome.actual)
            cited = {
                c.path
                for s in outcome.verdict.spans
                if isinstance(s, ClaimSpan)
                for c in s.citations
            }
            assert path not in cited and outcome.unverified_shown == [], case.id


def test_the_recount_is_independent_of_the_gate(corpus: Corpus) -> None:
    # Listing a verified claim as unverified must show up: the count is not the gate's word.
    case = next(c for c in corpus.cases if c.style == "json-mode")
    shown = next(s["text"] for s in _spans(case.replies[0]) if s["kind"] == "claim")
    outcome = run_case(case.model_copy(update={"unverified": [shown]}), corpus.prompts)
    assert outcome.unverified_shown == [shown]
