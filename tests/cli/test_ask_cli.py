"""``codecite ask`` as a user runs it: a separate process, a real index, the contract's JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from answer_helpers import (
    LOOP_QUESTION,
    MODEL,
    QUESTION,
    cite,
    claim,
    copy_loop_repo,
    copy_sample,
    index_repo,
    one_claim,
    reply,
    sources_for,
    tool_calls,
)

from codecite_lsp.answer.llm import MOCK_ENV
from codecite_lsp.answer.pipeline import Answerer
from codecite_lsp.core.limits import MAX_TEXT_CHARS
from codecite_lsp.verify.quotes import normalise_ws

# One scripted reply per answer: the second pass (support_check) has its own tests.
ONE_CALL = {"CODECITE_SUPPORT_CHECK": "off"}


def codecite(
    repo: Path, index_dir: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codecite_lsp", *args, "--repo", str(repo),
         "--index-dir", str(index_dir)],
        capture_output=True, text=True, timeout=300, env={**os.environ, **env},
    )  # fmt: skip


def assert_answer_contract(answer: dict[str, Any], repo: Path) -> None:
    assert set(answer) >= {"status", "trace_id"}
    if answer["status"] == "refused":
        assert answer["reason"] in {
            "no_span_in_retrieval", "unverified_citation", "ambiguous", "stale_index",
            "model_error",
        }  # fmt: skip
        assert isinstance(answer["detail"], str) and answer["detail"]
        for ref in answer["retrieved"]:
            assert set(ref) >= {"path", "start_line", "end_line", "score"}
        return
    assert answer["status"] == "answered"
    assert any(span["kind"] == "claim" for span in answer["spans"])
    for span in answer["spans"]:
        assert span["kind"] in {"prose", "gap", "claim"} and span["text"]
        if span["kind"] != "claim":
            continue
        assert span["citations"], "every claim has a citation"
        for citation in span["citations"]:
            assert set(citation) >= {
                "path", "start_line", "end_line", "quote", "content_hash", "revision",
            }  # fmt: skip
            lines = (repo / citation["path"]).read_text().splitlines()
            cited = "\n".join(lines[citation["start_line"] - 1 : citation["end_line"]])
            assert normalise_ws(citation["quote"]) in normalise_ws(cited)


def test_ask_indexes_first_then_answers_in_the_contract_shape(tmp_path: Path) -> None:
    repo = copy_sample(tmp_path)
    done = codecite(repo, tmp_path / "index", "ask", QUESTION, "--json")

    assert done.returncode == 0, done.stderr
    assert "indexing the repository first" in done.stderr
    answer = json.loads(done.stdout)  # stdout holds exactly one JSON object
    assert answer["status"] == "answered"
    assert_answer_contract(answer, repo)
    assert "sk-never-index-me" not in done.stdout  # the git-ignored log was never indexed

    again = codecite(repo, tmp_path / "index", "ask", QUESTION)
    assert again.returncode == 0
    assert "indexing" not in again.stderr  # the index is reused
    assert "keyvault/keys.py:" in again.stdout


def test_refusals_exit_zero_with_the_reason_and_the_closest_places(tmp_path: Path) -> None:
    repo = copy_sample(tmp_path)
    index_dir = tmp_path / "index"
    config = index_repo(repo, index_dir)
    sources = sources_for(Answerer(repo, config), QUESTION)
    bogus = {**cite(sources, "keyvault/keys.py", "old.retired_at = now"), "source": "S9"}
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([json.loads(reply(claim("Retired.", bogus)))]))

    done = codecite(
        repo,
        index_dir,
        "ask",
        QUESTION,
        "--json",
        "--model",
        MODEL,
        **{MOCK_ENV: f"@{script}", **ONE_CALL},
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["status"], answer["reason"]) == ("refused", "unverified_citation")
    assert "a citation named a source that was not retrieved" in answer["detail"]
    assert "S9" not in answer["detail"]  # the request's labels never reach the user
    assert answer["retrieved"]
    assert_answer_contract(answer, repo)

    text = codecite(repo, index_dir, "ask", QUESTION, **{MOCK_ENV: "litellm.Timeout",
                    "CODECITE_MODEL": MODEL, "CODECITE_MODEL_TIMEOUT": "3"})  # fmt: skip
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("No answer: The model gave no usable answer.")
    assert "the model timed out after 3 s" in text.stdout
    assert "keyvault/keys.py:" in text.stdout  # the closest places, to follow by hand


def test_retry_that_fixes_the_answer_through_a_mock_script(tmp_path: Path) -> None:
    repo = copy_sample(tmp_path)
    index_dir = tmp_path / "index"
    config = index_repo(repo, index_dir)
    sources = sources_for(Answerer(repo, config), QUESTION)
    good = cite(sources, "keyvault/keys.py", "old.retired_at = now")
    script = tmp_path / "replies.json"
    script.write_text(
        json.dumps(["not json at all", json.loads(reply(claim("The old key is retired.", good)))])
    )
    done = codecite(
        repo,
        index_dir,
        "ask",
        QUESTION,
        "--json",
        "--model",
        MODEL,
        **{MOCK_ENV: f"@{script}", **ONE_CALL},
    )
    assert done.returncode == 0 and done.stdout, done.stderr
    answer = json.loads(done.stdout)
    assert answer["status"] == "answered", answer
    assert_answer_contract(answer, repo)


def test_a_model_that_calls_tools_gets_the_loop_and_cites_what_it_read(tmp_path: Path) -> None:
    repo = copy_loop_repo(tmp_path)
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([
        tool_calls(("definition", {"symbol": "consume_value"})),
        one_claim("S2", 5, "return int(text)", "A setting of digits becomes a number."),
    ]))  # fmt: skip
    # One chunk shown: the first retrieval holds load_settings, never consume_value's body.
    settings = {"CODECITE_MODEL": MODEL, "CODECITE_EMBEDDING": "none",
                "CODECITE_CONTEXT_CHUNKS": "1", **ONE_CALL}  # fmt: skip
    done = codecite(repo, tmp_path / "index", "ask", LOOP_QUESTION,
                    **{MOCK_ENV: f"@{script}", **settings})  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert "codecite: looking up the definition of `consume_value`" in done.stderr.splitlines()
    assert "settings/values.py:5" in done.stdout and "return int(text)" in done.stdout, done.stdout


def test_empty_question_is_a_usage_error(tmp_path: Path) -> None:
    repo = copy_sample(tmp_path)
    index_repo(repo, tmp_path / "index")
    done = codecite(repo, tmp_path / "index", "ask", "  ")
    assert done.returncode == 2
    assert "the question is empty" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_oversized_question_query_or_limit_is_a_usage_error(tmp_path: Path) -> None:
    """The bounds every door shares (core/limits.py), checked before any work."""
    repo = copy_sample(tmp_path)
    pasted = "x" * (MAX_TEXT_CHARS + 1)
    for args, says in [
        (("ask", pasted), "argument question: is too long"),
        (("search", pasted), "argument query: is too long"),
        (("search", "keys", "--limit", "1000000"), "argument --limit: must be a whole number"),
    ]:
        done = codecite(repo, tmp_path / "index", *args)
        assert done.returncode == 2, done.stderr
        assert says in done.stderr
        assert "Traceback" not in done.stderr


CORPUS = Path(__file__).parents[1] / "fixtures" / "replay" / "corpus.json"


def test_eval_replays_the_corpus_as_a_release_gate(tmp_path: Path) -> None:
    run = [sys.executable, "-m", "codecite_lsp", "eval"]
    done = subprocess.run([*run, str(CORPUS)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "PASS"
    assert "unverified statements shown: 0" in lines
    assert any(line.startswith("answered: ") and "claims dropped" in line for line in lines)

    # A case whose outcome is not what the corpus says fails the gate (exit 1) and is named.
    corpus = json.loads(CORPUS.read_text())
    corpus["cases"][0]["expect"] = {"status": "refused", "reason": "model_error", "model_calls": 1}
    broken = tmp_path / "corpus.json"
    broken.write_text(json.dumps(corpus))
    failed = subprocess.run([*run, str(broken)], capture_output=True, text=True, timeout=120)
    assert failed.returncode == 1
    assert corpus["cases"][0]["id"] in failed.stdout and failed.stdout.endswith("FAIL\n")

    missing = subprocess.run([*run, str(tmp_path / "none.json")], capture_output=True, text=True)
    assert missing.returncode == 2 and "cannot replay" in missing.stderr
