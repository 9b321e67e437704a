"""Verified streaming in the Neovim plugin: a real headless Neovim against the real server, whose
model (litellm's mock, streamed in small chunks) writes three claims. The answer buffer shows the
claims verified so far, marked as arriving, before the answer replaces them; a second reply has a
claim whose quote is in no file, and the stricter retry's claims replace the first attempt's."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_nvim_plugin import run_driver

QUOTES = [
    (15, 15, "elapsed = max(0.0, now - self.updated_at)"),
    (16, 16, "self.tokens = min(self.capacity, self.tokens + elapsed * self.refill_per_second)"),
    (17, 17, "self.updated_at = now"),
]
CLAIMS = [
    "The elapsed time is max(0.0, now - self.updated_at).",
    "The bucket refills by the elapsed time times refill_per_second, up to capacity.",
    "Then allow records now as updated_at.",
]
# Three claims on the first source retrieved for the question (TokenBucket.allow).
REPLY = {
    "spans": [
        {
            "kind": "claim",
            "text": text,
            "citations": [{"source": "S1", "start_line": a, "end_line": b, "quote": quote}],
        }
        for text, (a, b, quote) in zip(CLAIMS, QUOTES, strict=True)
    ],
    "refuse": None,
}
# The second question: the first claim verifies, the second quotes a line that is not in the file
# (never shown); the stricter retry answers with the third claim alone.
FAILING = {
    "kind": "claim",
    "text": "The bucket refills to full capacity every second.",
    "citations": [{"source": "S1", "start_line": 16, "end_line": 16, "quote": "self.tokens = 1"}],
}
FIRST_ATTEMPT = {"spans": [REPLY["spans"][0], FAILING], "refuse": None}
RETRY = {"spans": [REPLY["spans"][2]], "refuse": None}


@pytest.fixture(scope="module")
def streamed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("nvim-stream")
    replies = base / "replies.json"
    replies.write_text(json.dumps([REPLY, FIRST_ATTEMPT, RETRY]), encoding="utf-8")
    settings = {"model": "openai/gpt-4o-mini", "embedding": "none"}
    _, report = run_driver(
        "stream_flow.lua",
        base,
        settings,
        CODECITE_MOCK_RESPONSE=f"@{replies}",
        CODECITE_SUPPORT_CHECK="off",
    )
    return report


def test_the_ask_carries_a_partial_result_token(streamed: dict[str, Any]) -> None:
    first, second = streamed["sent"]
    for sent in (first, second):
        assert sent["partialResultToken"].startswith("codecite-nvim-partial-")
        assert sent["partialResultToken"] != sent["workDoneToken"]
    assert first["partialResultToken"] != second["partialResultToken"], "one token per question"


def test_claims_show_one_by_one_before_the_answer(streamed: dict[str, Any]) -> None:
    events = streamed["events"]
    kinds = [event["kind"] for event in events]
    assert kinds[-1] == "answer" and kinds.count("answer") == 1, kinds
    snapshots = events[:-1]
    assert len(snapshots) >= 2, "fewer than two snapshots: the claims did not arrive one by one"
    assert not any(shot["answer_shown"] for shot in snapshots)
    # Each snapshot extends the one before; the buffer shows its claims as the answer will, with
    # the arriving line (the stage and how to stop) last.
    assert [shot["spans"] for shot in snapshots] == sorted(shot["spans"] for shot in snapshots)
    first, last = snapshots[0]["lines"], snapshots[-1]["lines"]
    assert first[0] == "Q: How does the token bucket refill?"
    assert f"- {CLAIMS[0]}" in first
    assert "  keyvault/ratelimit.py:L15" in first
    assert f"      {QUOTES[0][2]}" in first
    assert first[-1].endswith("… (:CodeciteCancel to stop)"), first[-1]
    assert all(f"- {claim}" in last for claim in CLAIMS[: snapshots[-1]["spans"]])


def test_the_answer_replaces_the_preview(streamed: dict[str, Any]) -> None:
    answer = streamed["answer"]
    assert answer["answer"]["status"] == "answered"
    assert [span["text"] for span in answer["answer"]["spans"] if span["kind"] == "claim"] == CLAIMS
    lines = answer["lines"]
    assert not any("(:CodeciteCancel to stop)" in line for line in lines)
    for claim in CLAIMS:
        assert f"- {claim}" in lines
    # The preview's lines were the answer's: the same renderer.
    preview = streamed["events"][-2]["lines"][:-1]  # less its arriving line
    assert lines[: len(preview)] == preview


def test_enter_on_a_claim_still_arriving_opens_its_line(streamed: dict[str, Any]) -> None:
    pressed = streamed["pressed"]
    assert pressed and not pressed["answer_shown"], "the answer came before the preview did"
    (opened,) = streamed["opened"]
    assert opened["command"] == "codecite.openCitation"
    assert opened["arguments"][0]["path"] == "keyvault/ratelimit.py"
    assert streamed["at"]["line"] == opened["arguments"][0]["start_line"]
    assert streamed["at"]["bufname"].endswith("/keyvault/ratelimit.py")


def test_a_retry_replaces_the_first_attempts_claims(streamed: dict[str, Any]) -> None:
    events = streamed["retry_events"]
    assert events[-1]["kind"] == "answer"
    first = [event for event in events if event.get("attempt") == 1]
    retry = [event for event in events if event.get("attempt") == 2]
    assert first and retry, [(event["kind"], event.get("attempt")) for event in events]
    assert events.index(first[-1]) < events.index(retry[0]), "the retry came first"
    assert f"- {CLAIMS[0]}" in first[-1]["lines"]
    assert f"- {CLAIMS[0]}" not in retry[0]["lines"], "the first attempt's claim stayed"
    assert f"- {CLAIMS[2]}" in retry[0]["lines"]
    for event in events[:-1]:
        assert f"- {FAILING['text']}" not in event["lines"], "a claim that failed was shown"
    lines = streamed["retry"]["lines"]
    assert f"- {CLAIMS[2]}" in lines and f"- {CLAIMS[0]}" not in lines


def test_work_done_progress_still_reaches_neovim(streamed: dict[str, Any]) -> None:
    tokens = {str(event["token"]) for event in streamed["progress"]}
    assert any(token.startswith("codecite-nvim-ask-") for token in tokens), tokens
    assert not any(token.startswith("codecite-nvim-partial-") for token in tokens), tokens
