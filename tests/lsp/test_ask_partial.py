"""Partial results through a real client over stdio: with a ``partialResultToken``, the
verified spans of the streamed reply (litellm's mock_response, streamed with stream=True)
arrive as ``$/progress`` snapshots before the answer; a claim that fails is in none of them.

The script (CODECITE_MOCK_RESPONSE): the model looks up the helper (the tool loop), answers
with framing prose, a claim that verifies and one whose quote is not in the file; the stricter
retry answers with the verified claim alone.

With the model's support check on (``checked``): two questions, each answered with prose and the
claim that verifies, judged by its own call as it verifies: entailed the first time (shown before
the answer), not the second (in no snapshot, and the answer refused).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest_lsp
from answer_helpers import LOOP_QUESTION, loop_session, one_claim, tool_calls
from lsp_helpers import (
    PartialResults,
    partial_results_client,
    server_config,
    to_json,
)
from pytest_lsp import ClientServerConfig, LanguageClient

MOCK_FILE = Path(tempfile.gettempdir()) / f"codecite-partial-mock-{os.getpid()}.json"
VERIFIED = one_claim("S2", 5, "return int(text)", "A setting of digits becomes a number.")
FAILING_TEXT = "A setting with a dot becomes a float."
FAILING = one_claim("S2", 5, "return float(text)", FAILING_TEXT)["spans"][0]
FIRST = {"spans": [{"kind": "prose", "text": "Here is how:"}, *VERIFIED["spans"], FAILING]}
SCRIPT = [tool_calls(("definition", {"symbol": "consume_value"})), FIRST, VERIFIED]


CHECKED_FILE = MOCK_FILE.with_name(f"codecite-partial-checked-{os.getpid()}.json")
ANSWER = {"spans": [{"kind": "prose", "text": "Here is how:"}, *VERIFIED["spans"]]}
ENTAILED, NOT_ENTAILED = ({"verdicts": [{"claim": 1, "entailed": ok}]} for ok in (True, False))
LOOKUP = tool_calls(("definition", {"symbol": "consume_value"}))
CHECKED_SCRIPT = [LOOKUP, ANSWER, ENTAILED, LOOKUP, ANSWER, NOT_ENTAILED]


def _config(mock: Path = MOCK_FILE, check: str = "off") -> ClientServerConfig:
    config = server_config(CODECITE_MOCK_RESPONSE=f"@{mock}", CODECITE_SUPPORT_CHECK=check)
    config.client_factory = partial_results_client
    return config


@pytest_lsp.fixture(config=_config())
async def client(lsp_client: LanguageClient, tmp_path: Path):
    async with loop_session(lsp_client, tmp_path, MOCK_FILE, SCRIPT):
        yield


@pytest_lsp.fixture(config=_config(CHECKED_FILE, "model"))
async def checked(lsp_client: LanguageClient, tmp_path: Path):
    async with loop_session(lsp_client, tmp_path, CHECKED_FILE, CHECKED_SCRIPT):
        yield


def _partial(client: LanguageClient) -> PartialResults:
    return client.partial  # type: ignore[attr-defined,no-any-return]


async def test_verified_spans_arrive_before_the_answer(client: LanguageClient):
    partial = _partial(client)
    params = {"question": LOOP_QUESTION, "partialResultToken": "partial-1"}
    answer = to_json(await partial.ask(client, params))

    snapshots = partial.values["partial-1"]
    assert partial.after_answer == []
    first = [s["spans"] for s in snapshots if s["attempt"] == 1]
    retry = [s["spans"] for s in snapshots if s["attempt"] == 2]
    # Attempt 1 grows span by span; the retry replaces it.
    assert [[span["kind"] for span in spans] for spans in first] == [
        ["prose"],
        ["prose", "claim"],
    ], snapshots
    assert [[span["text"] for span in spans] for spans in retry] == [[VERIFIED["spans"][0]["text"]]]
    # Each span is in the final answer's shape.
    assert answer["status"] == "answered", answer
    assert retry[-1] == answer["spans"]
    citation = first[-1][1]["citations"][0]
    assert (citation["path"], citation["start_line"]) == ("settings/values.py", 5)


async def test_a_failing_claim_is_in_no_snapshot(client: LanguageClient):
    partial = _partial(client)
    params = {"question": LOOP_QUESTION, "partialResultToken": 7, "workDoneToken": "ask-7"}
    client.progress_reports["ask-7"] = []
    answer = to_json(await partial.ask(client, params))

    shown = [span["text"] for s in partial.values[7] for span in s["spans"]]
    assert shown and FAILING_TEXT not in shown
    assert FAILING_TEXT not in json.dumps(answer)


async def test_with_the_support_check_claims_arrive_once_judged(checked: LanguageClient):
    partial = _partial(checked)
    claim = VERIFIED["spans"][0]["text"]
    params = {"question": LOOP_QUESTION, "partialResultToken": "judged"}
    answer = to_json(await partial.ask(checked, params))

    assert answer["status"] == "answered", answer
    snapshots = [s["spans"] for s in partial.values["judged"]]
    assert [[span["kind"] for span in spans] for spans in snapshots] == [
        ["prose"],
        ["prose", "claim"],
    ], snapshots
    assert snapshots[-1][1]["text"] == claim and snapshots[-1] == answer["spans"]

    # The same claim, judged not entailed this time: shown nowhere, and nothing else is left.
    params = {"question": LOOP_QUESTION, "partialResultToken": "unsupported"}
    answer = to_json(await partial.ask(checked, params))
    assert partial.after_answer == []
    assert answer["status"] == "refused", answer
    assert [s["spans"] for s in partial.values["unsupported"]] == [[ANSWER["spans"][0]]]
    assert claim not in json.dumps(partial.values["unsupported"])
