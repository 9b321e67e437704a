"""The reply shape a model without tool calling writes to ask for more sources (pure)."""

from __future__ import annotations

import json

from codecite_lsp.answer.tool_loop import written_calls

ANSWER = {"spans": [{"kind": "prose", "text": "It reads them."}], "refuse": None}


def test_an_answer_asks_for_nothing() -> None:
    assert written_calls(json.dumps(ANSWER)) == ()
    assert written_calls("no JSON at all {not json") == ()


def test_one_call_or_a_list_in_prose_or_a_fence() -> None:
    one = {"more": {"tool": "search", "arguments": {"query": "rotate keys"}}}
    fenced = f"Let me look first.\n```json\n{json.dumps(one)}\n```"
    (call,) = written_calls(fenced)
    assert (call.name, json.loads(call.arguments)) == ("search", {"query": "rotate keys"})
    listed = {
        "more": [
            {"tool": "definition", "arguments": {"symbol": "rotate"}},
            {"name": "callers", "arguments": '{"symbol": "rotate"}'},  # arguments as JSON text
        ]
    }
    calls = written_calls(json.dumps(listed))
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("definition", {"symbol": "rotate"}),
        ("callers", {"symbol": "rotate"}),
    ]
    assert len({c.id for c in calls}) == 2


def test_a_malformed_call_is_kept_so_that_the_model_hears_it_refused() -> None:
    (call,) = written_calls('{"more": ["search everything"]}')
    assert call.name == ""  # the loop answers "there is no tool ''"
