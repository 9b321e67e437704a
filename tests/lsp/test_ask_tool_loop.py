"""The tool loop through a real client over stdio: the first retrieval misses the function
that does the work; the model (litellm's mock_tool_calls, scripted by CODECITE_MOCK_RESPONSE)
looks it up by the name it sees called, and the answer cites it, verified against the lines the
loop read.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest_lsp
from answer_helpers import LOOP_QUESTION, loop_session, one_claim, tool_calls
from lsp_helpers import request, server_config
from lsprotocol import types
from pytest_lsp import LanguageClient

MOCK_FILE = Path(tempfile.gettempdir()) / f"codecite-loop-mock-{os.getpid()}.json"
SCRIPT = [
    tool_calls(("definition", {"symbol": "consume_value"})),
    one_claim("S2", 5, "return int(text)", "A setting of digits becomes a number."),
]


@pytest_lsp.fixture(
    config=server_config(CODECITE_MOCK_RESPONSE=f"@{MOCK_FILE}", CODECITE_SUPPORT_CHECK="off")
)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    async with loop_session(lsp_client, tmp_path, MOCK_FILE, SCRIPT):
        yield


async def test_the_answer_cites_the_helper_the_model_looked_up(client: LanguageClient):
    client.progress_reports["ask-loop"] = []
    params = {"question": LOOP_QUESTION, "workDoneToken": "ask-loop"}
    answer = await request(client, "codecite/ask", params)

    assert answer["status"] == "answered", answer
    [cited] = [c for span in answer["spans"] for c in span.get("citations", [])]
    assert (cited["path"], cited["start_line"], cited["quote"]) == (
        "settings/values.py",
        5,
        "return int(text)",
    )
    reports = client.progress_reports["ask-loop"]
    stages = [v.message for v in reports if isinstance(v, types.WorkDoneProgressReport)]
    assert "looking up the definition of `consume_value`" in stages, stages
