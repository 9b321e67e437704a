"""The wording every client shows, read from one data file (no node, browser or Neovim needed).
The generated wire types are checked in tests/unit/core/test_schema.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

from codecite_lsp.answer.render import answer_to_markdown, answer_to_text
from codecite_lsp.core.answers import RefusalReason, Refused, RetrievedRef
from codecite_lsp.core.wording import wording

ROOT = Path(__file__).resolve().parents[2]


def test_every_refusal_reason_has_words() -> None:
    assert set(wording()["reasons"]) == set(get_args(RefusalReason))
    assert {"no_answer", "unknown_reason", "closest"} <= set(wording()["labels"])


def test_cli_and_hover_say_what_the_wording_file_says() -> None:
    raw = json.loads((ROOT / "codecite_lsp" / "core" / "wording.json").read_text("utf-8"))
    refused = Refused(
        reason="ambiguous",
        detail="",
        retrieved=[RetrievedRef(path="a.py", start_line=3, end_line=3, score=0.5)],
    )
    text = answer_to_text(refused).splitlines()
    assert text[0] == f"{raw['labels']['no_answer']}: {raw['reasons']['ambiguous']}"
    assert text[1] == f"{raw['labels']['closest']}:"
    assert text[2] == "  a.py:3-3  (relevance 0.50)"  # the relevance the floor is judged on
    markdown = answer_to_markdown(refused, lambda c: "")
    assert markdown.startswith(f"**{raw['labels']['no_answer']}.** {raw['reasons']['ambiguous']}")
    assert "- `a.py:L3`" in markdown  # one line reads L3, not 3-3
