"""The Neovim plugin (editors/nvim) in a real headless Neovim against the real server.

Each Lua driver in tests/nvim_plugin/ plays a user session and writes what the user would see
(buffer lines, cursor position, quickfix list, messages) to a JSON report; the tests read it.
Every wait in the drivers is bounded, and the Neovim process itself has a timeout here.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsp_helpers import FIXTURE, nvim_binary, server_env

from codecite_lsp import __version__
from codecite_lsp.core.wording import wording

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "editors" / "nvim"
DRIVERS = Path(__file__).parent / "nvim_plugin"
NVIM_TIMEOUT = 240  # seconds for a whole session; the drivers' own waits are far shorter

# A model reply whose quote is in no file: the gate must withhold it.
FABRICATED = {
    "spans": [
        {
            "kind": "claim",
            "text": "Keys rotate every hour.",
            "citations": [
                {"source": "S1", "start_line": 1, "end_line": 1, "quote": "ROTATE_HOURLY = True"}
            ],
        }
    ],
    "refuse": None,
}


def make_repo(base: Path) -> Path:
    repo = base / "repo"
    shutil.copytree(FIXTURE, repo)
    # .git is the root marker the plugin looks for (Neovim is started outside the repository).
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def run_driver(
    driver: str, base: Path, settings: dict[str, Any], **env: str
) -> tuple[Path, dict[str, Any]]:
    """One Neovim session; a second one with the same `base` reopens the same repository, with
    the same state folder (what a user's closing and reopening Neovim keeps)."""
    repo = base / "repo" if (base / "repo").is_dir() else make_repo(base)
    out = base / "report.json"
    setup = {
        "cmd": [sys.executable, "-m", "codecite_lsp", "serve"],
        "settings": settings,
    }
    environment = server_env(
        CODECITE_NVIM_REPO=str(repo),
        CODECITE_NVIM_OUT=str(out),
        CODECITE_NVIM_SETUP=json.dumps(setup),
        HOME=str(base),  # --clean ignores user config; keep Neovim's state files out of ~ too
        XDG_STATE_HOME=str(base / "state"),
        **env,
    )
    command = [
        nvim_binary(),
        "--headless",
        "--clean",
        "-i", "NONE",
        "-n",
        "--cmd", f"set rtp+={PLUGIN}",
        "--cmd", "filetype on",
        "-c", f"luafile {DRIVERS / driver}",
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=base, env=environment, capture_output=True, text=True, timeout=NVIM_TIMEOUT
    )
    index_dir = Path(settings.get("index_dir") or repo / ".codecite")
    said = f"nvim said:\n{done.stdout}\n{done.stderr}\nserver log:\n{server_log(index_dir)}"
    assert out.is_file(), f"the driver wrote no report; {said}"
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert report.get("error") is None, f"{report['error']}\n{said}"
    assert report["attached"], "the server never attached to the opened file"
    assert report["indexed"], "indexing never reported its end"
    return repo, report


def server_log(index_dir: Path) -> str:
    log = index_dir / "server.log"
    return log.read_text(encoding="utf-8")[-4000:] if log.is_file() else "(none)"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    base = tmp_path_factory.mktemp("nvim")
    settings = {"model": "extractive", "index_dir": str(base / "nvim-index")}
    repo, report = run_driver("answer_flow.lua", base, settings)
    report["settings"] = settings
    return repo, report


def where(item: dict[str, Any]) -> str:
    """How the answer buffer names a place: ``path:L10-14``, ``path:L10`` for one line."""
    start, end = item["start_line"], item["end_line"]
    return f"{item['path']}:L{start}" + (f"-{end}" if end != start else "")


def refusal_headline(reason: str) -> str:
    """The words the server's wording file gives a reason (the plugin keeps no copy)."""
    words = wording()
    return f"{words['labels']['no_answer']}: {words['reasons'][reason]}"


def citations(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for span in answer["spans"] if span["kind"] == "claim" for c in span["citations"]]


def test_answer_buffer_shows_claims_citations_and_quotes(session: tuple[Path, dict]) -> None:
    _, report = session
    asked = report["answer"]
    assert asked["answer"]["status"] == "answered"
    lines = asked["lines"]
    assert lines[0] == "Q: How are API keys rotated?"
    for citation in citations(asked["answer"]):
        at = lines.index(f"  {where(citation)}")
        first_quote_line = citation["quote"].strip("\n").split("\n")[0]
        assert lines[at + 1] == f"      {first_quote_line}"
    claims = [s for s in asked["answer"]["spans"] if s["kind"] == "claim"]
    assert f"- {claims[0]['text']}" in lines
    # Answer text is Markdown: highlighted (markup concealed) like the VS Code chat renders it.
    assert report["answer_view"] == {"markdown": True, "conceallevel": 2}


def test_enter_on_citation_opens_cited_line(session: tuple[Path, dict]) -> None:
    repo, report = session
    citation, at = report["enter"]["citation"], report["enter"]["at"]
    assert citation["path"] == "keyvault/keys.py"
    assert at["bufname"] == str(repo / citation["path"])
    assert at["line"] == citation["start_line"]
    assert at["buftype"] == ""
    assert at["answer_visible"], "the file must open in a code window, not replace the answer"


def test_gd_on_quote_line_opens_that_citation(session: tuple[Path, dict]) -> None:
    repo, report = session
    citation, at = report["gd"]["citation"], report["gd"]["at"]
    assert citation["path"] != report["enter"]["citation"]["path"]
    assert (at["bufname"], at["line"]) == (str(repo / citation["path"]), citation["start_line"])


def test_citation_follows_lines_that_moved(session: tuple[Path, dict]) -> None:
    repo, report = session
    citation = report["enter"]["citation"]
    at = report["moved"]["at"]
    assert (at["bufname"], at["line"]) == (str(repo / citation["path"]), citation["start_line"] + 3)
    moved = f"moved to {citation['path']}:{citation['start_line'] + 3}"
    assert any(moved in message for message in report["messages"])


def test_citations_command_fills_quickfix(session: tuple[Path, dict]) -> None:
    repo, report = session
    expected = [
        {
            "filename": str(repo / c["path"]),
            "lnum": c["start_line"],
            "end_lnum": c["end_line"],
            "text": c["quote"].strip("\n").split("\n")[0].strip(),
        }
        for c in citations(report["answer"]["answer"])
    ]
    assert report["quickfix"]["items"] == expected
    assert report["quickfix"]["title"] == "codecite: How are API keys rotated?"


def test_visual_selection_is_sent_with_the_question(session: tuple[Path, dict]) -> None:
    _, report = session
    entry = report["history"]["entries"][0]
    assert entry["question"].startswith("What does this do?")
    assert "old.retired_at = now" in entry["question"]
    # uri + position reached the server: it recorded the enclosing symbol as the context.
    history = Path(report["settings"]["index_dir"]) / "history.jsonl"
    records = [json.loads(line) for line in history.read_text(encoding="utf-8").splitlines()]
    asked = [r for r in records if r["question"].startswith("What does this do?")]
    assert asked[-1]["context"] == {"path": "keyvault/keys.py", "symbol": "rotate_key"}
    visual = report["visual"]["answer"]
    assert visual["status"] == "answered"
    assert {c["path"] for c in citations(visual)} == {"keyvault/keys.py"}


def test_refusal_shows_reason_and_opens_closest_place(session: tuple[Path, dict]) -> None:
    repo, report = session
    refused = report["refusal"]
    assert refused["answer"]["status"] == "refused"
    assert refusal_headline("no_span_in_retrieval") in refused["lines"]
    assert "No answer: Nothing in the indexed code answers this question." in refused["lines"]
    for ref in refused["answer"]["retrieved"]:
        assert f"  {where(ref)}" in refused["lines"]
    ref, at = report["refusal_open"]["ref"], report["refusal_open"]["at"]
    assert (at["bufname"], at["line"]) == (str(repo / ref["path"]), ref["start_line"])


def test_checkhealth_reports_server_version_and_index(session: tuple[Path, dict]) -> None:
    repo, report = session
    health = "\n".join(report["health"])
    assert f"server command: {sys.executable} -m codecite_lsp serve" in health
    assert f"server version: codecite {__version__}" in health
    assert re.search(rf"index {re.escape(str(repo))}: [1-9]\d* files, [1-9]\d* chunks", health)
    assert "ERROR" not in health and "WARNING" not in health


def test_progress_status_and_settings_reach_the_server(session: tuple[Path, dict]) -> None:
    repo, report = session
    kinds = [p["kind"] for p in report["progress"]]
    assert kinds[0] == "begin" and "end" in kinds
    assert report["progress"][0]["title"] == "codecite: indexing"
    status = report["notifications"][0]["message"]
    assert re.match(rf"codecite: {re.escape(str(repo))}: [1-9]\d* files", status)
    assert "; indexed " in status, (
        "a finished first pass says when the index was brought up to date"
    )
    # index_dir came only from setup({settings = ...}): the index went there, not into the repo.
    assert (Path(report["settings"]["index_dir"]) / "server.log").is_file()
    assert not (repo / ".codecite").exists()


@pytest.fixture(scope="module")
def mocked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A session whose model (mocked through litellm) invents a quote; started by :CodeciteStart."""
    base = tmp_path_factory.mktemp("nvim-mock")
    replies = base / "replies.json"
    replies.write_text(json.dumps(FABRICATED), encoding="utf-8")
    settings = {"model": "openai/gpt-4o-mini", "embedding": "none"}
    return run_driver(
        "mock_refusal_flow.lua",
        base,
        settings,
        CODECITE_MOCK_RESPONSE=f"@{replies}",
        CODECITE_SUPPORT_CHECK="off",
    )


def test_unverified_model_answer_is_withheld(mocked: tuple[Path, dict]) -> None:
    repo, report = mocked
    assert report["root"] == str(repo), "the .git root marker decides the workspace folder"
    refused = report["refusal"]
    assert refused["answer"]["reason"] == "unverified_citation"
    assert refusal_headline("unverified_citation") in refused["lines"]
    assert not any("ROTATE_HOURLY" in line for line in refused["lines"])
    ref, at = report["refusal_open"]["ref"], report["refusal_open"]["at"]
    assert (at["bufname"], at["line"]) == (str(repo / ref["path"]), ref["start_line"])
    assert report["quickfix_items"] == 0
    assert any("no citations" in n["message"] for n in report["notifications"])


def test_commands_exist_before_setup(mocked: tuple[Path, dict]) -> None:
    _, report = mocked
    before = report["before_setup"]
    assert before["commands"] == [
        "CodeciteAsk", "CodeciteCitations", "CodeciteStatus", "CodeciteReindex", "CodeciteStart"
    ]  # fmt: skip
    assert any("no server running" in n["message"] for n in before["said"])


def test_a_pasted_file_as_question_is_cut_not_rejected(mocked: tuple[Path, dict]) -> None:
    _, report = mocked
    answer, lines = report["too_long"]["answer"], report["too_long"]["lines"]
    assert answer["status"] in ("answered", "refused")
    assert not any(line.startswith("The request failed") for line in lines)
    if answer["status"] == "answered":
        assert "cut" in (answer.get("note") or "")
