"""The Neovim plugin keeps each repository's conversation across sessions: three real headless
Neovims, one after the other, on the same repository and state folder (stdpath('state')), against
the real server (offline answers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_nvim_plugin import run_driver

SETTINGS = {"model": "extractive", "embedding": "none"}


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    base = tmp_path_factory.mktemp("nvim-conversation")
    reports = {}
    for phase in ("ask", "follow_up", "new"):
        _, reports[phase] = run_driver(
            "conversation_flow.lua", base, SETTINGS, CODECITE_NVIM_PHASE=phase
        )
    return reports


def test_a_follow_up_after_reopening_neovim_continues_the_conversation(
    sessions: dict[str, dict[str, Any]],
) -> None:
    first = sessions["ask"]
    assert first["state_file_exists"], "the conversation was not saved"
    (sent,) = sessions["follow_up"]["sent"]
    assert sent["question"] == "Where is it called?"
    (turn,) = sent["history"]
    assert turn["question"] == "What does the sign function do?"
    assert turn["answer"] == first["first"]["answer"]
    said = "(continues the conversation; :CodeciteNew starts a new one)"
    assert sessions["follow_up"]["follow_up"]["lines"][1] == said
    assert said not in first["first"]["lines"]


def test_codecite_new_clears_the_saved_conversation(sessions: dict[str, dict[str, Any]]) -> None:
    assert not sessions["follow_up"]["state_file_exists"], ":CodeciteNew left the file"
    (sent,) = sessions["new"]["sent"]
    assert "history" not in sent, "the question after :CodeciteNew carried the old conversation"


def test_a_damaged_state_file_is_replaced_by_the_next_answer(tmp_path: Path) -> None:
    _, report = run_driver("conversation_flow.lua", tmp_path, SETTINGS, CODECITE_NVIM_PHASE="ask")
    state = Path(report["state_file"])
    state.write_text('{"root": ', encoding="utf-8")  # Neovim killed mid-write, a full disk
    _, again = run_driver("conversation_flow.lua", tmp_path, SETTINGS, CODECITE_NVIM_PHASE="ask")
    (sent,) = again["sent"]
    assert "history" not in sent, "a damaged file is an empty conversation"
    saved = json.loads(state.read_text(encoding="utf-8"))
    assert [turn["question"] for turn in saved["turns"]] == ["What does the sign function do?"]
