"""One contract in the repository: the JSON schema generated from the answer types, and the
wording every client shows, read from one data file (no node, browser or Neovim needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

from codecite_lsp.answer.render import answer_to_markdown, answer_to_text
from codecite_lsp.core import schema
from codecite_lsp.core.answers import RefusalReason, Refused, RetrievedRef
from codecite_lsp.core.wording import wording

ROOT = Path(__file__).resolve().parents[2]


def test_committed_schema_matches_the_answer_types() -> None:
    committed = (ROOT / "docs" / "answer.schema.json").read_text(encoding="utf-8")
    assert committed == schema.render(), (
        "docs/answer.schema.json is stale: run "
        "`python -m codecite_lsp.core.schema docs/answer.schema.json` and `npm run gen:types` "
        "in editors/vscode (CONTRIBUTING.md)"
    )


def test_schema_tells_the_variants_apart_and_names_every_refusal_reason() -> None:
    definitions = schema.answer_schema()["$defs"]
    assert definitions["Answered"]["required"][0] == "status"
    assert definitions["ClaimSpan"]["required"][0] == "kind"
    assert definitions["Moved"]["required"][0] == "state"
    reasons = definitions["Refused"]["properties"]["reason"]["enum"]
    assert reasons == list(get_args(RefusalReason))


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
    markdown = answer_to_markdown(refused, lambda c: "")
    assert markdown.startswith(f"**{raw['labels']['no_answer']}.** {raw['reasons']['ambiguous']}")
    assert "- `a.py:L3`" in markdown  # one line reads L3, not 3-3
