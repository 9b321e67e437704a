"""Edits to a large unsaved buffer cost the edit, not the buffer (a real server over stdio):
after opening a 20 MB file, 300 one-line edits left the next codecite/status waiting 37 s,
because each edit rewrote the whole text on the event loop. bench/bench_lsp_bounds.py prints
the time."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest_lsp
from lsp_helpers import hover_markdown, init_params, request, server_config, wait_indexed
from lsprotocol import types
from pytest_lsp import LanguageClient

EDITS = 300
NO_REPLY = 30.0  # generous: answered in well under a second with bounded edits


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient, repo: Path):
    await lsp_client.initialize_session(init_params("visual-studio-code", repo))
    yield
    await lsp_client.shutdown_session()


def insert(client: LanguageClient, uri: str, version: int, line: int, text: str) -> None:
    where = types.Position(line=line, character=0)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=where, end=where), text=text
                )
            ],
        )
    )


async def test_edits_to_a_20_mb_buffer_leave_the_server_answering(
    client: LanguageClient, repo: Path
):
    await wait_indexed(client)
    path = repo / "generated.py"
    text = "".join(f"def handler_{n}(event):\n    return event + {n}\n" for n in range(450_000))
    assert len(text) > 20_000_000
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=text
            )
        )
    )
    for version in range(2, EDITS + 2):
        insert(client, uri, version, 0, "#\n")
    status = await asyncio.wait_for(request(client, "codecite/status", {}), NO_REPLY)
    assert status["roots"]
    # The buffer holds the edits: a call typed on line 150 (one of the inserted comment lines)
    # is explained from the indexed definition.
    insert(client, uri, EDITS + 2, 150, "rotate_key(store, client)\n")
    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=150, character=3),
            )
        ),
        NO_REPLY,
    )
    assert "rotate_key" in hover_markdown(hover)
