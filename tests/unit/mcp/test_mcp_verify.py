"""The MCP tools' pure parts: judging an agent's quote, the nearest real lines, path checks and
the numbered excerpt."""

from __future__ import annotations

from pathlib import Path

import pytest

from codecite_lsp.core.config import Config
from codecite_lsp.mcp.tools import excerpt
from codecite_lsp.service.privacy import Missing, Privacy, Unreadable, clean_path
from codecite_lsp.verify.agent_quotes import check_quote, nearest_match

FILE = """\
import time


def rotate_key(store, client, now=None):
    now = time.time() if now is None else now
    old = store.current(client)
    old.retired_at = now
    fresh = new_key(now)
    store.add(client, fresh)
    return fresh


def needs_rotation(store, client, now):
    return now - store.current(client).created_at >= PERIOD
"""


def test_a_quote_in_the_cited_lines_is_verified_whatever_its_spacing() -> None:
    verdict = check_quote(
        "k.py", 6, 8, "old = store.current(client)\n  old.retired_at   = now", FILE
    )
    assert (verdict.state, verdict.start_line, verdict.end_line) == ("verified", 6, 8)


def test_a_quote_at_other_lines_is_moved_to_where_it_is() -> None:
    verdict = check_quote("k.py", 40, 41, "fresh = new_key(now)\nstore.add(client, fresh)", FILE)
    assert (verdict.state, verdict.start_line, verdict.end_line) == ("moved", 8, 9)


def test_an_edited_quote_is_stale_and_the_current_lines_come_back_verbatim() -> None:
    verdict = check_quote(
        "k.py", 14, 14, "return now - store.current(client).created_at > PERIOD", FILE
    )
    assert verdict.state == "stale"
    assert verdict.nearest is not None
    assert verdict.nearest.start_line == 14
    assert verdict.nearest.text == "    return now - store.current(client).created_at >= PERIOD"
    assert verdict.nearest.similarity >= 0.75


def test_a_fabricated_quote_is_not_found_with_the_most_similar_lines() -> None:
    verdict = check_quote("k.py", 7, 7, "store.delete_all(client, force=True)", FILE)
    assert verdict.state == "not_found"
    assert verdict.nearest is not None and verdict.nearest.similarity < 0.75
    assert verdict.nearest.text in FILE  # verbatim lines, never the agent's words


def test_nothing_in_common_has_no_nearest() -> None:
    verdict = check_quote("k.py", 1, 1, "SELECT * FROM accounts", FILE)
    assert verdict.state == "not_found" and verdict.nearest is None


def test_nearest_spans_as_many_lines_as_the_quote_and_prefers_the_cited_place() -> None:
    lines = ["x = 1", "y = 2", "pad", "x = 1", "y = 2"]
    found = nearest_match(lines, "x = 1\ny = 3", near_line=4)
    assert found is not None and (found.start_line, found.end_line) == (4, 5)


def test_a_signature_folded_onto_one_line_finds_the_whole_signature() -> None:
    lines = [
        "import os",
        "",
        "def run_sync(",
        "    func: Callable[..., T],",
        "    *args: object,",
        "    cancellable: bool = False,",
        ") -> T:",
        "    return func(*args)",
    ]
    folded = "def run_sync(func: Callable[..., T], *args: object, cancellable: bool = False) -> T:"
    found = nearest_match(lines, folded, near_line=1)
    assert found is not None and (found.start_line, found.end_line) == (3, 7)


@pytest.mark.parametrize(
    "path",
    [
        "../x.py",
        "/etc/passwd",
        "a/../../x.py",
        "a/..",
        "C:/Windows/win.ini",
        "..\\x.py",
        "",
        ".",
        "a\0b",
    ],
)
def test_paths_that_could_leave_the_workspace_are_refused(path: str) -> None:
    with pytest.raises(Unreadable):
        clean_path(path)


def test_relative_paths_are_normalised() -> None:
    assert clean_path("./src//a.py") == "src/a.py"
    assert clean_path("src\\a.py") == "src/a.py"


def test_excerpt_numbers_lines_and_marks_the_cited_ones() -> None:
    lines = [f"line {n}" for n in range(1, 13)]
    assert excerpt(lines, 9, 10, 1).split("\n") == [
        "   8 | line 8",
        ">  9 | line 9",
        "> 10 | line 10",
        "  11 | line 11",
    ]


def test_a_folder_a_missing_file_and_a_symlink_out_are_refused_in_plain_words(
    tmp_path: Path,
) -> None:
    root = tmp_path / "workspace"
    (root / "pkg").mkdir(parents=True)
    (tmp_path / "outside.py").write_text("LEAK = 1\n")
    (root / "up").symlink_to(tmp_path)
    with pytest.raises(Unreadable, match="is a folder"):
        Privacy.for_root(root, Config()).read("pkg")
    with pytest.raises(Missing, match="no such file"):
        Privacy.for_root(root, Config()).read("pkg/none.py")
    with pytest.raises(Unreadable, match="outside the workspace"):
        Privacy.for_root(root, Config()).read("up/outside.py")


GATE = Path(__file__).parents[3] / "codecite_lsp" / "verify" / "prepared.py"


@pytest.mark.parametrize("quote", ["e", " prepare(s", "def prepare(sources: list[Source]) -> di"])
def test_verify_citations_refuses_what_the_gate_refuses(quote: str) -> None:
    import threading

    from codecite_lsp.mcp.models import CitationIn
    from codecite_lsp.mcp.tools import verify_citations

    lines = GATE.read_text(encoding="utf-8").split("\n")
    line = next(n for n, text in enumerate(lines, start=1) if text.startswith("def prepare("))
    root = GATE.parents[2]
    cited = CitationIn(
        path="codecite_lsp/verify/prepared.py", start_line=line, end_line=line, quote=quote
    )
    whole = cited.model_copy(update={"quote": lines[line - 1]})
    out = verify_citations(root, Config(), [cited, whole], threading.Event())
    refused, verified = out.results
    assert verified.state == "verified"  # the same line, quoted whole
    assert refused.state in ("stale", "not_found"), refused
    assert refused.reason is not None and refused.reason.startswith(
        ("the quote starts or ends inside a word", "the quote is too short")
    )
