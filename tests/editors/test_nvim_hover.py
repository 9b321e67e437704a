"""Hover, :checkhealth and the statusline in a real headless Neovim 0.11 with the plugin, against
the real server (offline): the hover renders as Neovim's own LSP hovers (fenced code in the
file's language, no wrapped URI, `->` as written) and `gx` on a citation opens the cited line;
:checkhealth while the server starts says it is starting; the statusline shows indexing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from test_nvim_plugin import run_driver


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("nvim-hover")
    slow = base / "slow-codecite"
    # The server answers initialize only after a pause: :checkhealth runs while it starts.
    slow.write_text(
        "#!/bin/sh\n"
        '[ "$1" = "--version" ] || sleep 8\n'
        f'exec {sys.executable} -m codecite_lsp serve "$@"\n',
        encoding="utf-8",
    )
    slow.chmod(0o755)
    settings = {"model": "extractive", "embedding": "none"}
    _, report = run_driver("hover_flow.lua", base, settings, CODECITE_NVIM_SLOW_CMD=str(slow))
    report["repo"] = str(base / "repo")
    return report


def test_checkhealth_says_a_starting_server_is_starting(shown: dict[str, Any]) -> None:
    assert shown["started"]
    health = "\n".join(shown["health_starting"])
    assert "no codecite server is running" not in health
    assert "is starting (initializing)" in health


def test_the_statusline_shows_indexing_and_clears_when_done(shown: dict[str, Any]) -> None:
    running = [text for text in shown["status_seen"] if text]
    assert running and all(text.startswith("codecite: indexing") for text in running), running
    assert any("%" in text for text in running)
    assert shown["status_after"] == ""


def test_the_hover_renders_code_as_a_fenced_block_and_no_line_wraps(
    shown: dict[str, Any],
) -> None:
    hover = shown["hover"]
    lines = hover["lines"]
    assert hover["filetype"] == "markdown"
    assert "```python" in lines, lines
    assert lines[lines.index("```python") + 1].startswith("def rotate_key(store: KeyStore"), lines
    assert not any(line.startswith(">") for line in lines), "code is not a block quote"
    assert "-\\>" not in "\n".join(lines) and "-> ApiKey" in "\n".join(lines)
    assert not any("command:" in line for line in lines)
    # No line takes more than one screen line (a concealed URI wrapping left blank screen lines
    # under each link); fewer: Neovim hides the fence lines.
    assert hover["screen_lines"] <= len(lines), lines


def test_gx_on_a_hover_citation_opens_the_cited_line(shown: dict[str, Any]) -> None:
    link = shown["link"]
    url = link["url"]
    assert url, f"the hover has no file: link: {shown['hover']['lines']}"
    at = link["at"]
    path, line = url.removeprefix("file://").split("#L")
    assert Path(path) == Path(shown["repo"]) / "keyvault" / "keys.py"
    assert (at["bufname"], at["line"]) == (path, int(line))
    assert at["buftype"] == "" and link["origin_win"]
