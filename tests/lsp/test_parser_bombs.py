"""Issue 10's 271-byte Markdown file (260 nested block quotes: tree-sitter-markdown dies with
SIGSEGV at 255) against a real server, through every door it used to take the server down by:
the cold index, the watcher, and a hover over an unsaved buffer holding that text."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import copy_repo, init_params, request, server_config, wait_for, wait_indexed
from lsprotocol import types
from pytest_lsp import LanguageClient

BOMB = "# T\n\n" + ">" * 260 + " word\n"
NESTED_LIST = "# L\n\n" + "".join("  " * depth + "- item\n" for depth in range(300))


@pytest.fixture
def bomb_repo(tmp_path: Path) -> Path:
    repo = copy_repo(tmp_path)
    (repo / "a.md").write_text(BOMB, encoding="utf-8")
    return repo


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient, bomb_repo: Path):
    await lsp_client.initialize_session(init_params("visual-studio-code", bomb_repo))
    yield
    await lsp_client.shutdown_session()


async def files_indexed(client: LanguageClient) -> int:
    status = await request(client, "codecite/status", {})
    return int(status["roots"][0]["files_indexed"])


async def test_the_bomb_costs_nothing_through_index_watcher_and_hover(
    client: LanguageClient, bomb_repo: Path
):
    await wait_indexed(client)  # the cold index survived a.md
    found = await request(client, "codecite/search", {"query": "word"})
    assert any(r["path"] == "a.md" for r in found["results"])  # indexed, as plain text

    before = await files_indexed(client)
    (bomb_repo / "b.md").write_text(NESTED_LIST, encoding="utf-8")  # through the watcher
    await wait_for(lambda: files_indexed(client), lambda n: n == before + 1, timeout=60)

    uri = (bomb_repo / "c.md").as_uri()  # an unsaved buffer, hovered
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="markdown", version=1,
                                                 text=BOMB)
        )
    )  # fmt: skip
    await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=2, character=262),
        )
    )
    assert await files_indexed(client) == before + 1  # the server is alive and answering
