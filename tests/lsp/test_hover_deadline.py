"""A hover never waits long for a slow model: past hover_timeout it shows the offline explanation.

The model is litellm's own mock, made slow with litellm's mock_delay (CODECITE_MOCK_DELAY)."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import (
    hover_at,
    hover_markdown,
    init_params,
    linked_citations,
    server_config,
    wait_indexed,
)
from pytest_lsp import LanguageClient

MODEL_DELAY = 4.0  # seconds litellm sleeps before its mocked reply
MODEL_CLAIM = "The old key is marked retired."


def model_reply(repo: Path) -> str:
    """A reply quoting rotate_key's body, from the first source (keys.py for this hover)."""
    keys = (repo / "keyvault" / "keys.py").read_text().splitlines()
    line = next(i for i, text in enumerate(keys, 1) if "old.retired_at = now" in text)
    quote = "old.retired_at = now"
    citation = {"source": "S1", "start_line": line, "end_line": line, "quote": quote}
    claim = {"kind": "claim", "text": MODEL_CLAIM, "citations": [citation]}
    return json.dumps({"spans": [claim], "refuse": None})


# The server reads the reply at each model call (llm.py's CODECITE_MOCK_RESPONSE=@file).
MOCK_FILE = Path(tempfile.gettempdir()) / f"codecite-mock-hover-{os.getpid()}.json"
MOCKED_SLOW_MODEL = server_config(
    CODECITE_MOCK_RESPONSE=f"@{MOCK_FILE}", CODECITE_MOCK_DELAY=str(MODEL_DELAY)
)


@pytest_lsp.fixture(config=MOCKED_SLOW_MODEL, params=[0.5, 60.0])
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, repo: Path):
    # One scripted reply per hover: the second pass (support_check) has its own tests.
    options = {
        "model": "openai/gpt-4o-mini",
        "hover_timeout": request.param,
        "support_check": "off",
    }
    lsp_client.hover_timeout = request.param  # type: ignore[attr-defined]
    await lsp_client.initialize_session(init_params("visual-studio-code", repo, options))
    yield
    await lsp_client.shutdown_session()
    # The model call given up on may still be importing litellm in a thread: the server must exit
    # anyway (interpreter teardown once deadlocked on that thread's import lock).
    server = lsp_client._server
    assert server is not None
    try:
        await asyncio.wait_for(server.wait(), timeout=10)
    except TimeoutError:
        server.kill()
        pytest.fail("the server did not exit within 10 s of the exit notification")
    assert server.returncode == 0


@pytest.fixture(autouse=True)
def _mock_reply(repo: Path):
    MOCK_FILE.write_text(model_reply(repo))
    yield
    MOCK_FILE.unlink(missing_ok=True)


async def test_a_slow_model_gives_way_to_the_offline_hover_in_time(
    client: LanguageClient, repo: Path
):
    await wait_indexed(client)
    # Hovered where it is defined, the model pipeline ranks this chunk first: its source S1.
    # How long the hover took is bench/bench_lsp_bounds.py's figure; here only what it showed.
    hover = await hover_at(client, repo / "keyvault" / "keys.py", "rotate_key(store")
    markdown = hover_markdown(hover)
    assert any(c["path"] == "keyvault/keys.py" for c in linked_citations(markdown)), markdown
    if client.hover_timeout < MODEL_DELAY:  # type: ignore[attr-defined]
        assert MODEL_CLAIM not in markdown  # the offline explanation, not the model's
    else:
        assert MODEL_CLAIM in markdown  # a model within the deadline is shown
