"""The bounded tool loop through the service's ask, on a real index. The model is litellm's
own ``mock_response`` and ``mock_tool_calls`` (CODECITE_MOCK_RESPONSE scripts, llm.py): the
tools, privacy rules, gate and trace are real.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from answer_helpers import (
    LOOP_QUESTION,
    MODEL,
    LitellmCalls,
    copy_loop_repo,
    last_trace,
    one_claim,
    tool_calls,
)

from codecite_lsp.answer import llm
from codecite_lsp.core.answers import Answered, ClaimSpan, Refused
from codecite_lsp.service.ask import ask
from codecite_lsp.service.session import Session

INT_ANSWER = one_claim("S2", 5, "return int(text)", "A setting of digits becomes a number.")
LOADER_ANSWER = one_claim("S1", 10, "settings[key.strip()] = consume_value(raw)", "Each is read.")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from codecite_lsp.index.indexer import Indexer

    root = copy_loop_repo(tmp_path_factory.mktemp("loop"))
    (root.parent / "outside.py").write_text("SECRET = 1\n")
    Indexer(root, Session(root, _settings(root)).config).run()
    return root


def _settings(root: Path, **extra: Any) -> dict[str, Any]:
    # One chunk shown: the first retrieval holds load_settings, never consume_value's body.
    return {
        "embedding": "none",
        "index_dir": str(root.parent / "ix"),
        "model": MODEL,
        "context_chunks": 1,
        "model_retries": 0,
        "support_check": "off",  # one scripted reply per answer: no second pass
        **extra,
    }


def _ask(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    script: list[Any],
    stages: list[str] | None = None,
    cancel: threading.Event | None = None,
    **settings: Any,
) -> tuple[Answered | Refused, dict[str, Any]]:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(script))
    monkeypatch.setenv(llm.MOCK_ENV, f"@{replies}")
    session = Session(root, _settings(root, **settings))
    answer = ask(
        session, LOOP_QUESTION, None, None, None,
        cancel=cancel or threading.Event(),
        stage=(stages.append if stages is not None else None),
    )  # fmt: skip
    return answer, last_trace(session.config, root, answer.trace_id or "")


def _tool_results(calls: LitellmCalls, index: int) -> list[str]:
    return [m["content"] for m in calls.calls[index]["messages"] if m["role"] == "tool"]


def test_the_model_looks_up_the_helper_it_sees_named_and_cites_it(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, litellm_calls: LitellmCalls
) -> None:
    stages: list[str] = []
    script = [tool_calls(("definition", {"symbol": "consume_value"})), INT_ANSWER]
    answer, record = _ask(indexed, monkeypatch, tmp_path, script, stages)

    first_prompt = json.dumps(litellm_calls.calls[0]["messages"])
    assert "def consume_value" not in first_prompt  # the first retrieval missed it
    assert isinstance(answer, Answered), answer
    claim = next(s for s in answer.spans if isinstance(s, ClaimSpan))
    cited = claim.citations[0]
    assert (cited.path, cited.start_line, cited.quote) == (
        "settings/values.py",
        5,
        "return int(text)",
    )
    assert "looking up the definition of `consume_value`" in stages
    # The ignored copy in build/ is never a tool's result.
    assert "build/generated.py" not in json.dumps(_tool_results(litellm_calls, 1))
    loop = record["tool_loop"]
    assert (loop["rounds"], loop["stopped"]) == (2, "answered")
    assert [(c["tool"], c["outcome"], c["labels"]) for c in loop["calls"]] == [
        ("definition", "sources", ["S2"])
    ]
    assert record["model_calls"] == 2 and record["attempts"][0]["gate"] == "passed"


def test_a_label_the_loop_never_read_is_unknown_to_the_gate(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The same answer without the lookup: S2 was never shown, so it cannot be cited.
    answer, record = _ask(indexed, monkeypatch, tmp_path, [INT_ANSWER])
    assert isinstance(answer, Refused), answer
    assert record["attempts"][0]["checks"][0]["why"] == "unknown_label"


@pytest.mark.parametrize(
    ("path", "refusal"),
    [
        ("../outside.py", "leaves the workspace"),
        (".env", "secret or ignored"),
        ("build/generated.py", "secret or ignored"),
        ("/etc/passwd", "is absolute"),
    ],
)
def test_a_read_outside_the_workspace_or_of_a_private_file_is_refused(
    indexed: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    litellm_calls: LitellmCalls,
    path: str,
    refusal: str,
) -> None:
    script = [tool_calls(("read", {"path": path, "start_line": 1, "end_line": 5})), LOADER_ANSWER]
    answer, record = _ask(indexed, monkeypatch, tmp_path, script)

    [result] = _tool_results(litellm_calls, 1)
    assert result.startswith("refused: ") and refusal in result, result
    assert "never-shown" not in result and "SECRET" not in result
    assert isinstance(answer, Answered), answer
    assert record["tool_loop"]["calls"][0]["outcome"] == "refused"


def test_a_read_inside_is_a_source_the_answer_may_cite(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, litellm_calls: LitellmCalls
) -> None:
    stages: list[str] = []
    read = ("read", {"path": "settings/values.py", "start_line": 3, "end_line": 6})
    script = [tool_calls(read), INT_ANSWER]
    answer, _ = _ask(indexed, monkeypatch, tmp_path, script, stages)
    assert "reading values.py:3-6" in stages
    [result] = _tool_results(litellm_calls, 1)
    assert "[S2] settings/values.py:3-6" in result
    assert isinstance(answer, Answered), answer


def test_the_rounds_budget_holds_then_the_model_mustone_claim(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, litellm_calls: LitellmCalls
) -> None:
    look = tool_calls(("search", {"query": "consume value"}))
    answer, record = _ask(
        indexed, monkeypatch, tmp_path, [look, look, LOADER_ANSWER], tool_rounds=2
    )
    assert isinstance(answer, Answered), answer
    assert (record["tool_loop"]["rounds"], record["tool_loop"]["stopped"]) == (2, "rounds")
    assert record["model_calls"] == 3
    offered = [{t["function"]["name"] for t in c["kwargs"].get("tools") or []}
               for c in litellm_calls.calls]  # fmt: skip
    assert "search" in offered[0] and "search" in offered[1]
    assert "search" not in offered[2]  # the last call may only answer


def test_calls_over_the_rounds_allowance_are_refused(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    many = tool_calls(*[("callers", {"symbol": "consume_value"})] * 3)
    _, record = _ask(indexed, monkeypatch, tmp_path, [many, LOADER_ANSWER], tool_calls_per_round=2)
    outcomes = [c["outcome"] for c in record["tool_loop"]["calls"]]
    assert outcomes[2] == "over_budget" and "over_budget" not in outcomes[:2]


def test_the_token_budget_holds(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    look = tool_calls(("search", {"query": "consume value"}))
    _, record = _ask(indexed, monkeypatch, tmp_path, [look, LOADER_ANSWER], tool_tokens=1)
    assert (record["tool_loop"]["rounds"], record["tool_loop"]["stopped"]) == (1, "tokens")


def test_the_seconds_budget_holds(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(llm.MOCK_DELAY_ENV, "0.3")
    look = tool_calls(("search", {"query": "consume value"}))
    _, record = _ask(indexed, monkeypatch, tmp_path, [look, LOADER_ANSWER], tool_seconds=0.2)
    assert (record["tool_loop"]["rounds"], record["tool_loop"]["stopped"]) == (1, "seconds")


def test_cancel_stops_the_loop_at_once(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(llm.MOCK_DELAY_ENV, "5")
    cancel = threading.Event()
    done: list[Answered | Refused] = []
    look = tool_calls(("search", {"query": "consume value"}))
    thread = threading.Thread(
        target=lambda: done.append(_ask(indexed, monkeypatch, tmp_path, [look], cancel=cancel)[0])
    )
    thread.start()
    time.sleep(0.5)
    cancel.set()
    thread.join(timeout=1.0)  # a deadline: a loop that goes on fails here
    assert not thread.is_alive()
    assert isinstance(done[0], Refused) and done[0].reason == "model_error"


def test_with_the_loop_off_the_model_answers_single_shot(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, litellm_calls: LitellmCalls
) -> None:
    answer, record = _ask(indexed, monkeypatch, tmp_path, [LOADER_ANSWER], tool_loop="off")
    assert isinstance(answer, Answered), answer
    assert record["tool_loop"] is None and len(litellm_calls) == 1
    assert "tools" not in litellm_calls.calls[0]["kwargs"]
    assert '"more"' not in json.dumps(litellm_calls.calls[0]["messages"])


def test_a_model_without_tool_calling_asks_for_more_in_its_reply(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, litellm_calls: LitellmCalls
) -> None:
    """ollama/llama3 has no tool calling in litellm: it writes the lookup as its reply, gets
    the helper as a new source and cites it."""
    stages: list[str] = []
    lookup = {"tool": "definition", "arguments": {"symbol": "consume_value"}}
    more = "I need the helper first.\n" + json.dumps({"more": [lookup]})
    script = [more, INT_ANSWER]
    answer, record = _ask(indexed, monkeypatch, tmp_path, script, stages, model="ollama/llama3")
    assert isinstance(answer, Answered), answer
    claim = next(s for s in answer.spans if isinstance(s, ClaimSpan))
    assert (claim.citations[0].path, claim.citations[0].quote) == (
        "settings/values.py",
        "return int(text)",
    )
    assert all("tools" not in call["kwargs"] for call in litellm_calls.calls)
    second = litellm_calls.calls[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": more}
    assert second[-1]["role"] == "user" and second[-1]["content"].startswith(
        'Result of definition({"symbol": "consume_value"}):'
    )
    assert "def consume_value" in second[-1]["content"]
    assert "looking up the definition of `consume_value`" in stages
    loop = record["tool_loop"]
    assert (loop["rounds"], loop["stopped"]) == (2, "answered")
    assert [(c["tool"], c["outcome"]) for c in loop["calls"]] == [("definition", "sources")]


def test_a_written_call_outside_the_workspace_is_refused_like_a_native_one(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, litellm_calls: LitellmCalls
) -> None:
    more = json.dumps(
        {
            "more": {
                "tool": "read",
                "arguments": {"path": "../outside.py", "start_line": 1, "end_line": 1},
            }
        }
    )
    answer, record = _ask(
        indexed, monkeypatch, tmp_path, [more, LOADER_ANSWER], model="ollama/llama3"
    )
    assert isinstance(answer, Answered), answer
    result = litellm_calls.calls[1]["messages"][-1]["content"]
    assert "refused:" in result and "SECRET" not in result
    assert record["tool_loop"]["calls"][0]["outcome"] == "refused"


def test_a_call_to_no_tool_or_with_bad_arguments_is_refused_in_words(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, litellm_calls: LitellmCalls
) -> None:
    bad = tool_calls(("delete", {"path": "x"}), ("read", {"path": "settings/values.py"}))
    answer, record = _ask(indexed, monkeypatch, tmp_path, [bad, LOADER_ANSWER])
    assert _tool_results(litellm_calls, 1) == [
        "refused: there is no tool 'delete'",
        "refused: start_line must be a whole number",
    ]
    assert [c["outcome"] for c in record["tool_loop"]["calls"]] == ["refused", "refused"]
    assert isinstance(answer, Answered), answer


@pytest.mark.parametrize(
    "failure", ["litellm.Timeout", "litellm.BadRequestError", "Sure! It reads them."]
)
def test_a_model_failing_mid_loop_is_refused_as_without_it_and_traced(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, failure: str
) -> None:
    look = tool_calls(("definition", {"symbol": "consume_value"}))
    answer, record = _ask(indexed, monkeypatch, tmp_path, [look, failure], model_timeout=7.0)
    single, _ = _ask(indexed, monkeypatch, tmp_path, [failure], model_timeout=7.0, tool_loop="off")

    assert isinstance(answer, Refused) and isinstance(single, Refused), (answer, single)
    assert (answer.reason, answer.detail) == (single.reason, single.detail)
    assert answer.reason == "model_error"
    loop = record["tool_loop"]  # what was read before the failure, and why the loop stopped
    assert [(c["tool"], c["outcome"]) for c in loop["calls"]] == [("definition", "sources")]
    if failure.startswith("litellm."):  # the call itself failed: the loop stopped there
        kind = "timeout" if failure == "litellm.Timeout" else "bad_request"
        assert (loop["rounds"], loop["stopped"], loop["error"]) == (1, "model_error", kind)
    else:  # a reply without tool calls is the loop's answer; the gate refuses it
        assert (loop["rounds"], loop["stopped"]) == (2, "answered") and "error" not in loop


def test_lines_read_know_the_definition_they_run_through(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, litellm_calls: LitellmCalls
) -> None:
    # Lines 3-6 are the body of consume_value: a claim may name it, as it may a chunk's symbol.
    read = ("read", {"path": "settings/values.py", "start_line": 3, "end_line": 6})
    named = one_claim("S2", 5, "return int(text)", "`consume_value` turns digits into a number.")
    answer, _ = _ask(indexed, monkeypatch, tmp_path, [tool_calls(read), named], [])
    assert isinstance(answer, Answered), answer
    [result] = _tool_results(litellm_calls, 1)
    assert "consume_value" in result.splitlines()[1]  # the source's header names it
