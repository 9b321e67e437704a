"""Follow-ups, ask stages and cancel in the Neovim plugin: a real headless Neovim against the real
server, whose model is mocked through litellm and slowed by litellm's ``mock_delay``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_nvim_plugin import run_driver

REFUSAL = {"spans": [], "refuse": {"reason": "no_span_in_retrieval"}}


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("nvim-followup")
    replies = base / "replies.json"
    replies.write_text(json.dumps(REFUSAL), encoding="utf-8")
    settings = {"model": "openai/gpt-4o-mini", "embedding": "none"}
    _, report = run_driver(
        "followup_flow.lua",
        base,
        settings,
        CODECITE_MOCK_RESPONSE=f"@{replies}",
        CODECITE_MOCK_DELAY="2",
        CODECITE_SUPPORT_CHECK="off",
    )
    return report


def test_a_follow_up_sends_the_previous_turn_and_new_forgets_it(slow: dict[str, Any]) -> None:
    sent = slow["sent"]
    assert [params["question"] for params in sent] == [
        "What does the sign function do?",
        "Where is it called?",
        "And how are API keys rotated?",
        "How are tokens verified?",
    ]
    assert "history" not in sent[0]
    (turn,) = sent[1]["history"]
    assert turn["question"] == "What does the sign function do?"
    assert turn["answer"] == slow["first"]["answer"]
    assert len(sent[2]["history"]) == 2
    assert "history" not in sent[3], ":CodeciteNew starts a new conversation"


def test_the_answer_buffer_shows_the_stages_and_cancel_says_cancelled(slow: dict[str, Any]) -> None:
    stages = slow["stages"]  # what the buffer showed, polled every 50 ms (fast steps may be missed)
    assert stages[0] == "Asking codecite…"
    rewriting, asking = (
        stages.index("Rewriting the follow-up question…"),
        stages.index("Asking the model…"),
    )
    assert rewriting < asking
    assert "Cancelled." in slow["cancelled_lines"]
    assert "codecite: cancelled" in slow["echo"]
    # the model's reply, had it come, would have replaced the buffer: it did not
    assert "Cancelled." in slow["after_wait_lines"]
    assert slow["conversation_after_cancel"] == slow["conversation_after_two"] == 2


def test_the_echo_area_is_cleared_when_the_answer_arrives(slow: dict[str, Any]) -> None:
    echoes = slow["echoes_after_first"]
    assert any("(:CodeciteCancel to stop)" in echo for echo in echoes), echoes
    assert echoes[-1] == "", f"the echo area still says {echoes[-1]!r} after the answer"
