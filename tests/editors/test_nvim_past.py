""":CodeciteHistory in a real headless Neovim against the real server: past answers from an
earlier conversation are listed (paged with `offset`) and the chosen one opens in the answer
buffer, read-only, after :CodeciteNew."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_nvim_plugin import run_driver

SETTINGS = {"model": "extractive", "embedding": "none"}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _, found = run_driver("past_flow.lua", tmp_path_factory.mktemp("nvim-past"), SETTINGS)
    return found


def test_past_answers_are_paged_with_the_next_offset(report: dict[str, Any]) -> None:
    assert report["history_params"] == [{"limit": 1, "offset": 0}, {"limit": 1, "offset": 1}]
    first, second = report["lists"]
    # Newest first; a full page (one entry) may be followed by more: the "load" row is offered.
    # Offline, this one may be answered or refused: either way its status and place are listed.
    assert re.match(
        r"How are tokens verified\? · (answered|refused) · just now · (closest: )?keyvault/",
        first[0],
    ), first[0]
    assert first[-1] == "Load older answers…"
    assert second[1].startswith("What does the sign function do? · answered · just now · ")


def test_the_chosen_past_answer_opens_read_only_after_a_new_conversation(
    report: dict[str, Any],
) -> None:
    assert report["shown"], f"no past answer shown: {report.get('error')}"
    lines = report["lines"]
    assert lines[0] == "Past answer · just now (read-only)"
    assert lines[1] == "Q: What does the sign function do?"
    assert report["citation_line"].lstrip().startswith("keyvault/")
    opened = report["opened"]
    assert opened["buftype"] == ""
    assert Path(opened["bufname"]).suffix == ".py"
    # Read-only: the question after it stands alone (the conversation was cleared, and the past
    # answer did not join it).
    assert "history" not in report["sent"][-1]
