"""A parser crash no guard foresaw costs one file, never the server: the server runs with the
Markdown guard off (``CODECITE_UNGUARDED_PARSE=1``), so issue 10's 271-byte file really crashes
tree-sitter (SIGSEGV) wherever it is parsed. A small repository (a pass under 200 files, parsed
by the resident worker), a saved file and an unsaved buffer each parse it; the server must go on
answering and list the file as skipped with the reason. Text already indexed is parsed again
when it is read back (the offline answer's definitions, the hover's, a follow-up's quotes): a
Kotlin file that indexes whole but whose chunks, read back, abort tree-sitter-kotlin (SIGABRT)
must leave every answer standing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from hostile_inputs import KOTLIN_BOMB, MARKDOWN_BOMB, NEST_PY, kotlin_read_back_bomb
from lsp_helpers import copy_repo, init_params, request, server_config, wait_for, wait_indexed
from lsprotocol import types
from pytest_lsp import LanguageClient

from codecite_lsp.ingest.guard import UNGUARDED_ENV

BOMB = MARKDOWN_BOMB
READ_BACK = {"Deep.kt": kotlin_read_back_bomb(), "wrapping.py": NEST_PY}
# A stack overflow: SIGSEGV, or SIGBUS where the guard page lies elsewhere.
CRASHED = re.compile(r"the parser crashed on this file \((SIGSEGV|SIGBUS)\); never indexed")


def crashed(skipped: list[dict[str, str]], path: str) -> bool:
    return any(s["path"] == path and CRASHED.fullmatch(s["reason"]) for s in skipped)


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
    assert crashed(root["skipped"], "a.md")
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
    assert crashed(root["skipped"], "notes.md")
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


def cited_paths(answer: dict[str, Any]) -> set[str]:
    return {c["path"] for span in answer["spans"] for c in span.get("citations", [])}


@pytest.mark.parametrize("repo", [READ_BACK], indirect=True)
async def test_an_offline_answer_whose_chunks_crash_the_parser_when_read_back_is_answered(
    client: LanguageClient, repo: Path
):
    await wait_indexed(client)
    root = await status(client)
    # Deep.kt indexes whole: only its chunks, read back, crash the parser.
    assert not any(skip["path"] == "Deep.kt" for skip in root["skipped"])
    assert "Deep.kt" in await search_paths(client, "nest")
    answer = await request(client, "codecite/ask", {"question": "What does nest do?"})
    # Deep.kt's run reads as prose; the answer still quotes wrapping.py, through the gate.
    assert answer["status"] == "answered", answer
    assert cited_paths(answer) == {"wrapping.py"}
    again = await request(client, "codecite/ask", {"question": "What does nest do?"})
    assert again["spans"] == answer["spans"]  # the same answer, no new crash
    assert (await status(client))["files_indexed"] == root["files_indexed"]


@pytest.mark.parametrize("repo", [READ_BACK], indirect=True)
async def test_a_hover_whose_chunks_crash_the_parser_when_read_back_still_explains(
    client: LanguageClient, repo: Path
):
    await wait_indexed(client)
    root = await status(client)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=(repo / "wrapping.py").as_uri()),
            position=types.Position(line=0, character=5),
        )
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.value.startswith("**nest**")
    assert "Wrap the key in one more envelope" in hover.contents.value
    assert (await status(client))["files_indexed"] == root["files_indexed"]


async def test_a_follow_up_whose_history_quotes_a_parser_crash_is_answered(
    client: LanguageClient, repo: Path
):
    await wait_indexed(client)
    # The client sends the earlier answer back; the definitions its quotes hold name what "it"
    # is. One quote aborts the parser: the other still names rotate_key.
    signature = "def rotate_key(store: KeyStore, client: str, now: float | None = None) -> ApiKey:"
    citations = [
        {"path": "Deep.kt", "start_line": 1, "end_line": 1, "quote": KOTLIN_BOMB},
        {"path": "keyvault/keys.py", "start_line": 47, "end_line": 47, "quote": signature},
    ]
    earlier = {
        "status": "answered",
        "spans": [{"kind": "claim", "text": "x", "citations": citations}],
    }
    history = [{"question": "What rotates keys?", "answer": earlier}]
    params = {"question": "Where is it called?", "history": history}
    answer = await request(client, "codecite/ask", params)
    assert answer["status"] == "answered", answer
    cited = [c for span in answer["spans"] for c in span.get("citations", [])]
    # rotate_key is never called in the sample repository: where it is used is its import.
    assert any("rotate_key" in c["quote"] for c in cited), answer
    assert all(c["path"] != "Deep.kt" for c in cited), answer
