"""``codecite.openCitation`` ends whatever the client answers to ``window/showDocument``: a reply
that does not fit ShowDocumentResult (null, a number, a string) was dropped by pygls as a
malformed message, and the command never answered (a real server process over stdio)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_helpers import (
    hover_at,
    hover_markdown,
    init_params,
    linked_citations,
    request,
    server_config,
    wait_indexed,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

NO_REPLY = 60.0  # a working server answers in well under a second; a stuck one never does


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient, repo: Path):
    await lsp_client.initialize_session(init_params("visual-studio-code", repo))
    yield
    await lsp_client.shutdown_session()


def answer_show_document_with(client: LanguageClient, reply: Any) -> list[str]:
    """Replace pytest-lsp's showDocument handler by one that answers ``reply``."""
    shown: list[str] = []

    def show_document(_: LanguageClient, params: types.ShowDocumentParams) -> Any:
        shown.append(params.uri)
        return reply

    client.protocol.fm._features.pop(types.WINDOW_SHOW_DOCUMENT)
    client.feature(types.WINDOW_SHOW_DOCUMENT)(show_document)
    return shown


@pytest.mark.parametrize("reply", [None, 5, "x", [1], {"success": "yes"}])
async def test_open_citation_answers_whatever_show_document_replies(
    client: LanguageClient, repo: Path, reply: Any
):
    shown = answer_show_document_with(client, reply)
    await wait_indexed(client)
    init = repo / "keyvault" / "__init__.py"
    citation = linked_citations(hover_markdown(await hover_at(client, init, "rotate_key")))[0]
    resolution = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="codecite.openCitation", arguments=[citation])
        ),
        NO_REPLY,
    )
    assert resolution["state"] == "exact"
    assert shown == [(repo / citation["path"]).as_uri()]
    assert isinstance(await request(client, "codecite/status", {}), dict)
