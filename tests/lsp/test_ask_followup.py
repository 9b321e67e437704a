"""Follow-up questions, ask progress and cancel through a real client over stdio.

The model is litellm with a scripted reply (CODECITE_MOCK_RESPONSE) delayed by litellm's own
``mock_delay`` (CODECITE_MOCK_DELAY): a slow model the client can watch and cancel.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_helpers import init_params, request, server_config, wait_indexed
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

MODEL = "openai/gpt-4o-mini"
DELAY = 3.0  # seconds the mocked model takes to reply
MOCK_FILE = Path(tempfile.gettempdir()) / f"codecite-followup-mock-{os.getpid()}.json"
REFUSAL = {"spans": [], "refuse": {"reason": "no_span_in_retrieval"}}


@pytest_lsp.fixture(config=server_config())
async def offline(lsp_client: LanguageClient, repo: Path):
    await lsp_client.initialize_session(init_params("neovim", repo, {"model": "extractive"}))
    await wait_indexed(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(
    config=server_config(
        CODECITE_MOCK_RESPONSE=f"@{MOCK_FILE}",
        CODECITE_MOCK_DELAY=str(DELAY),
        CODECITE_SUPPORT_CHECK="off",  # one scripted reply per answer
    )
)
async def slow(lsp_client: LanguageClient, repo: Path):
    MOCK_FILE.write_text(json.dumps(REFUSAL))
    await lsp_client.initialize_session(init_params("visual-studio-code", repo, {"model": MODEL}))
    await wait_indexed(lsp_client)
    yield
    await lsp_client.shutdown_session()
    MOCK_FILE.unlink(missing_ok=True)


def _cited(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for span in answer.get("spans", []) for c in span.get("citations", [])]


async def test_a_follow_up_finds_the_code_the_previous_turn_was_about(offline: LanguageClient):
    first = "What does the sign function do?"
    answer = await request(offline, "codecite/ask", {"question": first})
    assert answer["status"] == "answered", answer
    follow_up = "Where is it called?"
    alone = await request(offline, "codecite/ask", {"question": follow_up})
    assert not any("sign" in c["quote"] for c in _cited(alone)), alone  # "it" is unknown

    history = [{"question": first, "answer": answer}]
    again = await request(offline, "codecite/ask", {"question": follow_up, "history": history})
    quotes = [c["quote"] for c in _cited(again) if c["path"] == "keyvault/tokens.py"]
    assert any("sign" in quote.lower() for quote in quotes), again


@pytest.mark.parametrize(
    ("history", "message"),
    [
        ("earlier", "history must be an array of turns, got a string"),
        ([{"question": "q"}], "history[0].answer is required"),
        ([{"question": "q", "answer": {"status": "maybe"}}], "history[0].answer must be an answer"),
        ([{"question": " ", "answer": {"status": "refused"}}], "history[0].question must be a"),
        ([7], "history[0] must be an object, got a number"),
        ([{"question": "q", "answer": {"status": "refused"}}] * 51, "at most 50"),
    ],
)
async def test_a_bad_history_is_invalid_params_naming_the_field(
    offline: LanguageClient, history: Any, message: str
):
    with pytest.raises(JsonRpcException) as caught:
        await request(offline, "codecite/ask", {"question": "Where?", "history": history})
    assert caught.value.code == -32602 and message in str(caught.value), caught.value
    status = await request(offline, "codecite/status", {})  # the server carries on
    assert status["roots"]


async def test_the_stages_of_an_ask_are_reported_on_the_clients_token(slow: LanguageClient):
    slow.progress_reports["ask-1"] = []
    params = {"question": "How are API keys rotated?", "workDoneToken": "ask-1"}
    answer = await request(slow, "codecite/ask", params)
    assert answer["status"] == "refused"
    values = slow.progress_reports["ask-1"]
    assert isinstance(values[0], types.WorkDoneProgressBegin) and values[0].cancellable
    stages = [v.message for v in values if isinstance(v, types.WorkDoneProgressReport)]
    assert stages[:3] == ["retrieving", "asking the model", "verifying citations"]
    assert isinstance(values[-1], types.WorkDoneProgressEnd) and values[-1].message == "refused"


async def test_without_a_token_the_server_creates_one(slow: LanguageClient):
    before = set(slow.progress_reports)
    await request(slow, "codecite/ask", {"question": "How are API keys rotated?"})
    (token,) = set(slow.progress_reports) - before
    assert str(token).startswith("codecite-ask-")
    assert slow.progress_reports[token][-1].message == "refused"


async def _wait_for_stage(client: LanguageClient, token: str, stage: str) -> None:
    deadline = time.monotonic() + 20
    while not any(
        getattr(v, "message", None) == stage for v in client.progress_reports.get(token, [])
    ):
        assert time.monotonic() < deadline, client.progress_reports.get(token)
        await asyncio.sleep(0.02)


def _traces(repo: Path) -> list[dict[str, Any]]:
    path = repo / ".codecite" / "trace.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize(
    "how", ["cancelRequest", "progress cancel button", "cancelRequest streaming"]
)
async def test_cancel_stops_the_model_call_and_answers_cancelled(
    slow: LanguageClient, repo: Path, how: str
):
    # One answer first: litellm is imported (seconds, more on a loaded machine), so the times
    # below measure the cancel, not the import.
    await request(slow, "codecite/ask", {"question": "How are API keys rotated?"})
    token = f"ask-{how.replace(' ', '-')}"
    slow.progress_reports[token] = []
    params = {"question": "How are API keys rotated?", "workDoneToken": token}
    if how.endswith("streaming"):  # the reply asked for with stream=True stops as at once
        params["partialResultToken"] = f"partial-{token}"
    msg_id = f"slow-{token}"
    reply = slow.protocol.send_request("codecite/ask", params, msg_id=msg_id)
    await _wait_for_stage(slow, token, "asking the model")
    if how.startswith("cancelRequest"):
        slow.protocol.notify("$/cancelRequest", types.CancelParams(id=msg_id))
    else:
        slow.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wrap_future(reply)
    assert caught.value.code == -32800  # RequestCancelled
    assert slow.progress_reports[token][-1].message == "cancelled"

    async def traced() -> dict[str, Any]:
        while len(_traces(repo)) < 2:  # the warm-up's record, then the cancelled one's
            await asyncio.sleep(0.05)
        return _traces(repo)[-1]

    record = await asyncio.wait_for(traced(), DELAY)  # the worker stopped before the model replied
    assert record["attempts"] == [{"gate": "not_run", "error": "cancelled"}]
    history = await request(slow, "codecite/history", {})
    assert len(history["entries"]) == 1  # the warm-up; a cancelled question is not kept
