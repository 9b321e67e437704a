"""The request trace: one record per question, no question text, summed up by `codecite stats`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from answer_helpers import (
    QUESTION,
    cite,
    claim,
    copy_sample,
    index_repo,
    mocked,
    reply,
    sources_for,
)

from codecite_lsp.answer.pipeline import Answerer
from codecite_lsp.answer.trace import TraceLog, question_hash, summarise


def test_summary_of_real_requests_and_codecite_stats(tmp_path: Path) -> None:
    repo = copy_sample(tmp_path)
    index_dir = tmp_path / "index"
    config = index_repo(repo, index_dir)
    indexed = (repo, config)
    sources = sources_for(Answerer(repo, config), QUESTION)
    good = cite(sources, "keyvault/keys.py", "old.retired_at = now")

    bad = {**good, "quote": "keys.delete(old)"}
    answered = mocked(
        indexed,
        "Here is the answer:\n```json\n"
        + reply(claim("Retired.", good), claim("Gone.", bad))
        + "\n```",
    ).ask(QUESTION)
    unknown = mocked(indexed, reply(claim("Retired.", {**good, "source": "S9"}))).ask(QUESTION)
    floor = mocked(indexed, "litellm.Timeout", relevance_floor=1.01).ask(QUESTION)
    timeout = mocked(indexed, "litellm.Timeout").ask(QUESTION)
    assert [a.status for a in (answered, unknown, floor, timeout)] == [
        "answered", "refused", "refused", "refused",
    ]  # fmt: skip

    summary = summarise(index_dir)
    assert summary["requests"] == 4
    assert summary["answered"] == 1
    assert summary["refused_by_reason"] == {
        "model_error": 1,
        "no_span_in_retrieval": 1,
        "unverified_citation": 1,
    }
    assert (summary["citations_checked"], summary["unknown_label_citations"]) == (6, 2)
    assert summary["unknown_label_rate"] == round(2 / 6, 4)
    assert summary["retries"] == 2
    assert summary["model_calls"] == 2 + 2 + 0 + 1
    # One claim of the first answer never verified: removed; each reply's path is counted.
    assert summary["statements_removed"] == 1
    assert summary["reply_paths"] == {"json_schema/fenced": 2, "json_schema/json": 2}
    assert summary["tokens"] > 0
    # Search's first three, kept from the prompt only by the floor of 1.01 (the third request).
    assert summary["search_top_left_out_by_rule"] == {"floor": 3}

    trace_text = (index_dir / "trace.jsonl").read_text()
    assert QUESTION not in trace_text and "retired_at" not in trace_text
    records = TraceLog(index_dir).records()
    assert {r["question_hash"] for r in records} == {question_hash(QUESTION)}
    assert [r["trace_id"] for r in records] == [
        a.trace_id for a in (answered, unknown, floor, timeout)
    ]
    assert all(r["retrieved"] and "score" in r["retrieved"][0] for r in records[:2])
    # what ranked each source: its terms, the first of them the relevance its score rounds
    for source in records[0]["retrieved"]:
        assert source["terms"]["relevance"] == pytest.approx(source["score"], abs=1e-4)
        assert "search" in source["terms"]

    stats = subprocess.run(
        [sys.executable, "-m", "codecite_lsp", "stats", "--repo", str(repo),
         "--index-dir", str(index_dir)],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert json.loads(stats.stdout) == summary


def test_trace_tolerates_a_crashed_write(tmp_path: Path) -> None:
    log = TraceLog(tmp_path)
    log.write({"trace_id": "a", "status": "answered", "model_calls": 1})
    with log.path.open("a") as handle:
        handle.write('{"trace_id": "b", "sta')
    log.write({"trace_id": "c", "status": "refused", "reason": "model_error", "model_calls": 1})

    assert [r["trace_id"] for r in log.records()] == ["a", "c"]
    summary = summarise(tmp_path)
    assert (summary["answered"], summary["refused"], summary["model_calls"]) == (1, 1, 2)


def test_summary_of_no_trace_is_zero(tmp_path: Path) -> None:
    summary = summarise(tmp_path / "never-used")
    assert summary["requests"] == 0 and summary["unknown_label_rate"] == 0.0


def test_summary_counts_the_tool_loops_rounds_calls_and_stops(tmp_path: Path) -> None:
    log = TraceLog(tmp_path)
    calls = [{"tool": "definition"}, {"tool": "search"}, {"tool": "search"}]
    log.write({"status": "answered", "tool_loop": {"rounds": 3, "stopped": "answered",
                                                   "calls": calls}})  # fmt: skip
    log.write({"status": "refused", "reason": "model_error",
               "tool_loop": {"rounds": 1, "stopped": "model_error", "error": "timeout",
                             "calls": [{"tool": "read"}]}})  # fmt: skip
    log.write({"status": "answered", "tool_loop": None})  # single-shot: not a loop

    summary = summarise(tmp_path)
    assert (summary["tool_loops"], summary["tool_loop_rounds"]) == (2, 4)
    assert summary["tool_calls_by_tool"] == {"definition": 1, "read": 1, "search": 2}
    assert summary["tool_loops_stopped_by"] == {"answered": 1, "model_error": 1}
