"""The server's small pure parts: typed params, root policy, the cursor region, inert hover text."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from codecite_lsp.answer.render import inert
from codecite_lsp.lsp import region
from codecite_lsp.lsp.params import AskParams, HistoryParams, SearchParams, parse
from codecite_lsp.service.forbidden_roots import refusal


@pytest.mark.parametrize(
    ("kind", "value", "says"),
    [
        (AskParams, {"question": 42}, "question must be a string, got a number"),
        (AskParams, {"question": " "}, "question must be a non-empty string"),
        (AskParams, {"question": "q", "position": {"line": 1}}, "position.character is required"),
        (AskParams, {"question": "q", "position": {"line": -1, "character": 0}}, "position.line"),
        (AskParams, ["q"], "params must be an object, got an array"),
        (
            SearchParams,
            {"query": "q", "limit": True},
            "limit must be a whole number, got a boolean",
        ),
        (SearchParams, {"query": "q", "limit": "10"}, "limit must be a whole number, got a string"),
        (SearchParams, {"query": "q", "limit": 1.5}, "limit must be a whole number, got a number"),
        (SearchParams, {"query": "q", "limit": 201}, "limit must be a whole number from 1 to 200"),
        (SearchParams, {}, "query is required"),
        (HistoryParams, {"offset": -1}, "offset must be a whole number from 0"),
    ],
)
def test_wrong_params_name_the_field(kind: type, value: object, says: str):
    with pytest.raises(JsonRpcInvalidParams, match=says) as raised:
        parse(kind, value, "codecite/x")
    assert raised.value.code == -32602


def test_params_keep_what_they_are_given():
    assert parse(SearchParams, {"query": "keys", "limit": 5, "extra": 1}, "s").limit == 5
    assert parse(HistoryParams, {}, "h") == HistoryParams(limit=20, offset=0)


@pytest.mark.parametrize(
    "root",
    ["/", "/etc", "/etc/ssh", "/usr", "/usr/lib/python3", "/var", "/proc/1", "/sys", "/dev",
     "/boot", "/root", "/home", "/tmp", "/var/lib/dpkg"],
)  # fmt: skip
def test_system_folders_are_never_roots(root: str, tmp_path: Path):
    assert refusal(Path(root), home=tmp_path / "me") is not None


def test_the_home_folder_itself_is_never_a_root_but_a_project_in_it_is(tmp_path: Path):
    home = tmp_path / "me"
    assert "home folder" in (refusal(home, home=home) or "")
    assert "home folder" in (refusal(tmp_path, home=home) or "")  # holds the home folder
    assert refusal(home / "project", home=home) is None
    for fine in ("/var/www/site", "/usr/local/src/app", "/opt/app", "/srv/repo"):
        assert refusal(Path(fine), home=home) is None


def test_a_small_buffer_is_used_whole_without_a_copy():
    text = "a = 1\nb = 2\n"
    found = region.around(text, 1)
    assert found is not None and found[0] is text and found[1] == 1


def test_a_huge_buffer_is_cut_to_the_lines_around_the_cursor():
    lines = [f"value_{n} = {n}" for n in range(500_000)]
    text = "\n".join(lines)
    found = region.around(text, 250_000)
    assert found is not None
    part, line = found
    assert part.split("\n")[line] == "value_250000 = 250000"
    assert len(part) < 2 * region.CONTEXT_CHARS + 100
    assert region.around(text, 600_000) is None  # past the end


def test_a_huge_minified_line_is_not_explained():
    text = "x" * (region.WHOLE_BELOW_CHARS + 10) + "\nshort\n"
    assert region.around(text, 0) is None
    assert region.around(text, 1) is not None


@pytest.mark.parametrize(
    "hostile",
    [
        "[run me](command:codecite.reindex)",
        "![pixel](http://attacker.example/p.png)",
        "<http://attacker.example>",
        '<img src="http://attacker.example/p.png">',
        "[ref]\n\n[ref]: command:workbench.action.terminal.new",
    ],
)
def test_repository_text_is_inert(hostile: str):
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").render(inert(hostile))
    assert "<a " not in html and "<img" not in html


def test_code_spans_are_left_readable():
    assert inert("returns `items[0]` or [x](command:y)") == (
        "returns `items[0]` or \\[x\\](command:y)"
    )
