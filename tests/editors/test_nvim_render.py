"""The Neovim plugin's rendering, pure (no server): what the answer buffer and :CodeciteStatus
show for given replies, in a real headless Neovim."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from lsp_helpers import run_nvim_script

from codecite_lsp.core.wording import wording

SCRIPT = Path(__file__).parent / "nvim" / "render.lua"


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("nvim-render")
    result: dict[str, Any] = run_nvim_script(
        SCRIPT, home, CODECITE_WORDING=json.dumps(wording()), TZ="UTC"
    )
    return result


def test_claims_carry_line_ranges_and_unknown_kinds_read_as_prose(shown: dict[str, Any]) -> None:
    assert shown["answered"][:8] == [
        "Q: How?",
        "",
        "Rotation happens in `keyvault/keys.py`:",
        "",
        "- `rotate_key` issues a new key.",
        "  keyvault/keys.py:L47-48",
        "      def rotate_key():",
        "          pass",
    ]
    assert "The sources do not show storage at rest." in shown["answered"]


def test_claims_still_arriving_read_as_the_answer_then_the_stage(shown: dict[str, Any]) -> None:
    plain, marked = shown["arriving"]["plain"], shown["arriving"]["marked"]
    assert marked[:-1] == plain
    assert marked[-1] == "Asking the model… (:CodeciteCancel to stop)"


def test_refusals_use_the_servers_wording(shown: dict[str, Any]) -> None:
    words = wording()
    no_answer, closest = words["labels"]["no_answer"], words["labels"]["closest"]
    assert f"{no_answer}: {words['reasons']['stale_index']}" in shown["refused"]
    assert f"{closest} (<CR> opens):" in shown["refused"]
    assert "  a.py:L3" in shown["refused"]  # one line: L3, not 3-3
    assert f"{no_answer}: {words['labels']['unknown_reason']}" in shown["unknown_reason"]
    # An older server without codecite/wording: the reason code still says what happened.
    assert "No answer: ambiguous" in shown["without_wording"]


def test_status_says_whether_the_index_can_be_trusted_now(shown: dict[str, Any]) -> None:
    fresh, running, stale, new, broken = shown["status"]
    assert re.fullmatch(r"/fresh: 4 files, 9 chunks; indexed 2025-11-30 17:31", fresh)
    assert running == "/running: 2 files, 3 chunks; indexing, 5 pending"
    assert stale == "/stale: 4 files, 9 chunks; 2 pending"
    assert new == "/new: 0 files, 0 chunks; never indexed"
    assert broken == "/broken: 0 files, 0 chunks; failed: permission denied"


def test_a_past_answer_is_listed_by_age_and_its_chips_say_where_they_point_now(
    shown: dict[str, Any],
) -> None:
    past = shown["past"]
    assert past["label"] == "Where? · answered · 2 days ago · keyvault/keys.py"
    places = [line for line in past["lines"] if line.startswith("  keyvault/")]
    assert places == [
        "  keyvault/keys.py:L47-48 (moved to L50-51)",
        "  keyvault/keys.py:L47-48 (changed)",
        "  keyvault/keys.py:L47-48 (gone)",
    ]


def test_a_quote_is_dedented_as_a_block_with_its_first_lines_indentation(
    shown: dict[str, Any],
) -> None:
    """The first line (indented 8 in the file, 0 in the quote) was shown dedented, the rest not."""
    lines = shown["indented"]
    at = lines.index("  k.py:L10-12")
    assert lines[at + 1 : at + 4] == ["      if ready:", "          go()", "      else:"]


def test_the_trace_id_is_shown_only_with_the_debug_option(shown: dict[str, Any]) -> None:
    assert not any(line.startswith("trace ") for line in shown["traced"])
    assert "trace abc123" in shown["traced_debug"]


def test_an_answer_that_continues_the_conversation_says_so(shown: dict[str, Any]) -> None:
    said = "(continues the conversation; :CodeciteNew starts a new one)"
    assert shown["continued"][1] == said
    assert said not in shown["standalone"]
