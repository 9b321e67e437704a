"""A language server whose Python cannot start a parsing worker says so to the user, once, in
plain words, and keeps answering requests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest_lsp
from lsp_helpers import init_params, request, server_config, wait_for, wait_indexed
from lsprotocol import types
from pytest_lsp import LanguageClient

NO_WORKER = Path(__file__).parents[1] / "fixtures" / "no_worker"
PYTHONPATH = os.pathsep.join(filter(None, [str(NO_WORKER), os.environ.get("PYTHONPATH")]))


@pytest_lsp.fixture(config=server_config(PYTHONPATH=PYTHONPATH))
async def client(lsp_client: LanguageClient, repo: Path):
    await lsp_client.initialize_session(init_params("visual-studio-code", repo))
    yield
    await lsp_client.shutdown_session()


async def test_a_worker_that_cannot_start_is_shown_once_and_the_server_answers(
    client: LanguageClient, repo: Path
):
    await wait_indexed(client)
    (repo / "keyvault" / "keys.py").write_text("def rotate_key():\n    return 2\n")
    for _ in range(2):  # two saves fail the same way: said once
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=(repo / "keyvault/keys.py").as_uri())
            )
        )

    async def save_failures() -> int:
        return sum("index update failed" in m.message for m in client.log_messages)

    await wait_for(save_failures, lambda n: n >= 1)  # the saves' update ran, and failed
    found = await request(client, "codecite/search", {"query": "rotate_key", "limit": 5})
    assert found["results"] == []  # nothing could be indexed, and nothing pretends it was

    shown = [m.message for m in client.messages if "parsing worker could not start" in m.message]
    assert len(shown) == 1, [m.message for m in client.messages]  # the pass's, then the saves'
    updates = [m.message for m in client.log_messages if "index update failed" in m.message]
    assert all("parsing worker could not start" in message for message in updates), updates
    assert "exit code 1" in shown[0] and "nothing was indexed" in shown[0]
