"""A parser crash no guard foresaw costs one file, never the server: the server runs with the
Markdown guard off (``CODECITE_UNGUARDED_PARSE=1``), so issue 10's 271-byte file really crashes
tree-sitter (SIGSEGV) wherever it is parsed. A small repository (a pass under 200 files, parsed
by the resident worker), a saved file and an unsaved buffer each parse it; the server must go on
answering and list the file as skipped with the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_helpers import copy_repo, init_params, request, server_config, wait_for, wait_indexed
from lsprotocol import types
from pytest_lsp import LanguageClient

from codecite_lsp.ingest.guard import UNGUARDED_ENV

BOMB = "# T\n\n" + ">" * 260 + " word\n"
CRASHED = "the parser crashed on this file (SIGSEGV)"


@pytest.fixture
def repo(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """The sample repository, plus the files a test parametrizes it with."""
    repo = copy_repo(tmp_path)
    for name, text in getattr(request, "param", {}).items():
        (repo / name).write_text(text, encoding="utf-8")
    return repo


@pytest_lsp.fixture(config=server_config(**{UNGUARDED_ENV: "1"}))
async def client(lsp_client: LanguageClient, repo: Path):
    await lsp_client.initialize_session(init_params("visual-studio-code", repo))
    yield
    await lsp_client.shutdown_session()


async def status(client: LanguageClient) -> dict[str, Any]:
    found = await request(client, "codecite/status", {})
    return dict(found["roots"][0])


async def search_paths(client: LanguageClient, query: str) -> set[str]:
    found = await request(client, "codecite/search", {"query": query})
    return {result["path"] for result in found["results"]}


@pytest.mark.parametrize("repo", [{"a.md": BOMB}], indirect=True)
async def test_a_cold_index_skips_the_file_that_crashed_the_parser(
    client: LanguageClient, repo: Path
):
    await wait_indexed(client)
    root = await status(client)
    assert {"path": "a.md", "reason": f"{CRASHED}; never indexed"} in root["skipped"]
    assert "keyvault/keys.py" in await search_paths(client, "rotate key")  # the rest is indexed


async def test_a_saved_file_that_crashes_the_parser_is_skipped(client: LanguageClient, repo: Path):
    await wait_indexed(client)
    before = (await status(client))["files_indexed"]
    bomb = repo / "notes.md"
    bomb.write_text(BOMB, encoding="utf-8")
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(bomb.as_uri()))
    )
    root = await wait_for(
        lambda: status(client), lambda r: any(s["path"] == "notes.md" for s in r["skipped"])
    )
    assert {"path": "notes.md", "reason": f"{CRASHED}; never indexed"} in root["skipped"]
    assert root["files_indexed"] == before
    # Still answering, and still indexing saves.
    (repo / "later.py").write_text("def fresh_after_the_crash():\n    return 1\n")
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier((repo / "later.py").as_uri())
        )
    )
    await wait_for(
        lambda: search_paths(client, "fresh_after_the_crash"), lambda paths: "later.py" in paths
    )


async def test_a_hover_on_an_unsaved_buffer_that_crashes_the_parser_still_answers(
    client: LanguageClient, repo: Path
):
    await wait_indexed(client)
    uri = (repo / "draft.md").as_uri()
    text = BOMB + "\nSee KeyStore for the keys.\n"  # line 4
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="markdown", version=1,
                                                 text=text)
        )
    )  # fmt: skip
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=4, character=6),
        )
    )
    # The identifier under the cursor is explained without the parse (no enclosing section).
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.value.startswith("**KeyStore**")
    assert (await status(client))["files_indexed"] > 0  # alive


async def test_a_question_asked_from_a_buffer_that_crashes_the_parser_is_answered(
    client: LanguageClient, repo: Path
):
    await wait_indexed(client)
    uri = (repo / "draft.md").as_uri()
    text = BOMB + "\nSee KeyStore for the keys.\n"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="markdown", version=1,
                                                 text=text)
        )
    )  # fmt: skip
    position = {"line": 4, "character": 6}
    answer = await request(
        client, "codecite/ask", {"question": "what is this?", "uri": uri, "position": position}
    )
    assert answer["status"] in ("answered", "refused")  # an Answer, not a dead server
    assert (await status(client))["files_indexed"] > 0
