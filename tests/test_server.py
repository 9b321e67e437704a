"""The language server end to end: a real client over stdio, a real index on disk.

Each test runs twice, with the capabilities of VS Code and of Neovim.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_helpers import (
    copy_repo,
    hover_markdown,
    init_params,
    linked_citations,
    position_of,
    progress_ends,
    request,
    server_config,
    wait_for,
    wait_indexed,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

MOCK_FILE = Path(__file__).parent / ".mock_replies.json"  # rewritten by each test that asks


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return copy_repo(tmp_path)


@pytest_lsp.fixture(
    config=server_config(CODECITE_MOCK_RESPONSE=f"@{MOCK_FILE}"),
    params=["visual-studio-code", "neovim"],
)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, repo: Path):
    MOCK_FILE.write_text(json.dumps({"spans": [], "refuse": {"reason": "no_span_in_retrieval"}}))
    started = time.monotonic()
    result = await lsp_client.initialize_session(init_params(request.param, repo))
    lsp_client.initialize_seconds = time.monotonic() - started  # type: ignore[attr-defined]
    assert result.capabilities.hover_provider
    yield
    await lsp_client.shutdown_session()
    MOCK_FILE.unlink(missing_ok=True)


async def test_initialize_is_fast_and_indexing_reports_progress(client: LanguageClient):
    assert client.initialize_seconds < 1.0  # type: ignore[attr-defined]
    await wait_indexed(client)
    (values,) = [v for v in client.progress_reports.values() if v]
    kinds = [type(value).__name__ for value in values]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    assert values[0].cancellable is True
    percentages = [v.percentage for v in values if isinstance(v, types.WorkDoneProgressReport)]
    assert percentages and percentages[-1] == 100
    assert percentages == sorted(percentages)

    status = await request(client, "codecite/status", {})
    (root,) = status["roots"]
    assert root["files_indexed"] >= 5  # keyvault (4 .py), client.ts, README, docs
    assert root["pending"] == 0
    assert root["last_update"] is not None


async def test_hover_on_rotate_key_cites_its_definition(client: LanguageClient, repo: Path):
    await wait_indexed(client)
    init = repo / "keyvault" / "__init__.py"
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=init.as_uri()),
            position=position_of(init, "rotate_key"),
        )
    )
    markdown = hover_markdown(hover)
    keys = (repo / "keyvault" / "keys.py").read_text().splitlines()
    definition_line = next(i for i, line in enumerate(keys, 1) if "def rotate_key" in line)
    citations = linked_citations(markdown)
    assert any(
        c["path"] == "keyvault/keys.py" and c["start_line"] <= definition_line <= c["end_line"]
        for c in citations
    ), markdown
    assert f"keyvault/keys.py:{citations[0]['start_line']}-" in markdown  # plain-text fallback


async def test_hover_uses_unsaved_buffer_text(client: LanguageClient, repo: Path):
    """The symbol comes from what the user sees, not from the file on disk."""
    await wait_indexed(client)
    path = repo / "keyvault" / "tokens.py"
    text = "from .keys import rotate_key\n"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=path.as_uri(), language_id="python", version=1, text=text
            )
        )
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
            position=types.Position(line=0, character=20),
        )
    )
    assert "rotate_key" in hover_markdown(hover)


async def test_hover_disabled_returns_null(client: LanguageClient, repo: Path):
    await wait_indexed(client)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"codecite": {"hover": False}})
    )
    init = repo / "keyvault" / "__init__.py"
    params = types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=init.as_uri()),
        position=position_of(init, "rotate_key"),
    )
    assert await client.text_document_hover_async(params) is None


def _mock_answer() -> dict[str, Any]:
    """What a model would reply: one claim quoting rotate_key's body from the first source."""
    return {
        "spans": [
            {"kind": "prose", "text": "Rotation keeps the old key alive for a while."},
            {
                "kind": "claim",
                "text": "The old key is marked retired, not deleted.",
                "citations": [{"source": "S1", "start_line": 0, "end_line": 0, "quote": ""}],
            },
        ],
        "refuse": None,
    }


async def test_ask_with_mocked_model_returns_verified_answer(client: LanguageClient, repo: Path):
    await wait_indexed(client)
    keys = repo / "keyvault" / "keys.py"
    question = "How does rotate_key retire the old key?"
    # Asked from inside rotate_key, retrieval ranks keys.py first: the model's source S1.
    line = next(
        i
        for i, text in enumerate(keys.read_text().splitlines(), 1)
        if "old.retired_at = now" in text
    )
    reply = _mock_answer()
    reply["spans"][1]["citations"][0].update(
        start_line=line, end_line=line, quote="old.retired_at = now"
    )
    MOCK_FILE.write_text(json.dumps(reply))
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"model": "openai/gpt-4o-mini"})
    )
    answer = await request(
        client,
        "codecite/ask",
        {
            "question": question,
            "uri": keys.as_uri(),
            "position": {"line": line - 1, "character": 8},
        },
    )
    assert answer["status"] == "answered", answer
    (claim,) = [span for span in answer["spans"] if span["kind"] == "claim"]
    (citation,) = claim["citations"]
    assert citation["path"] == "keyvault/keys.py"
    assert (citation["start_line"], citation["end_line"]) == (line, line)
    assert citation["quote"] == "old.retired_at = now"


async def test_ask_refuses_a_mocked_answer_whose_quote_is_not_in_the_code(
    client: LanguageClient, repo: Path
):
    await wait_indexed(client)
    reply = _mock_answer()
    reply["spans"][1]["citations"][0].update(
        start_line=1, end_line=3, quote="keys are deleted immediately"
    )
    MOCK_FILE.write_text(json.dumps(reply))
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"model": "openai/gpt-4o-mini"})
    )
    answer = await request(client, "codecite/ask", {"question": "How are API keys rotated?"})
    assert answer["status"] == "refused"
    assert answer["reason"] == "unverified_citation"


async def test_open_citation_shows_the_exact_lines(client: LanguageClient, repo: Path):
    await wait_indexed(client)
    init = repo / "keyvault" / "__init__.py"
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=init.as_uri()),
            position=position_of(init, "rotate_key"),
        )
    )
    citation = linked_citations(hover_markdown(hover))[0]
    resolution = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="codecite.openCitation", arguments=[citation])
    )
    assert resolution["state"] == "exact"
    (shown,) = client.shown_documents
    target = repo / citation["path"]
    assert shown.uri == target.as_uri()
    assert shown.take_focus is True
    lines = target.read_text().splitlines()
    assert shown.selection == types.Range(
        start=types.Position(line=citation["start_line"] - 1, character=0),
        end=types.Position(
            line=citation["end_line"] - 1, character=len(lines[citation["end_line"] - 1])
        ),
    )


async def test_saved_edit_becomes_searchable(client: LanguageClient, repo: Path):
    await wait_indexed(client)
    audit = repo / "keyvault" / "audit.py"
    audit.write_text(
        'def record_quasarflux(event: str) -> str:\n    return "quasarflux " + event\n'
    )

    async def search() -> list[dict[str, Any]]:
        found = await request(client, "codecite/search", {"query": "quasarflux", "limit": 5})
        return found["results"]

    results = await wait_for(search, lambda r: any(x["path"] == "keyvault/audit.py" for x in r))
    assert "record_quasarflux" in results[0]["text"]


async def test_history_reports_moved_citations_with_new_lines(client: LanguageClient, repo: Path):
    await wait_indexed(client)
    answer = await request(client, "codecite/ask", {"question": "How is an API key rotated?"})
    assert answer["status"] == "answered", answer
    cited = next(c for s in answer["spans"] if s["kind"] == "claim" for c in s["citations"])
    path = repo / cited["path"]
    path.write_text("# one\n# two\n# three\n" + path.read_text())

    history = await request(client, "codecite/history", {"limit": 5})
    entry = history["entries"][0]
    assert entry["question"] == "How is an API key rotated?"
    first = next(c for c in entry["citations"] if c["citation"] == cited)
    resolution = first["resolution"]
    assert resolution["state"] == "moved"
    assert resolution["start_line"] == cited["start_line"] + 3
    assert resolution["end_line"] == cited["end_line"] + 3
    current = path.read_text().splitlines()
    assert resolution["lines"] == current[resolution["start_line"] - 1 : resolution["end_line"]]


async def test_restart_reuses_the_index(repo: Path):
    """A second server on the same repository finds the index current and writes nothing."""
    index = repo / ".codecite"
    summaries = []
    for _ in range(2):
        client = await server_config().start()
        try:
            await client.initialize_session(init_params("visual-studio-code", repo))
            await wait_indexed(client)
            summaries.append(progress_ends(client)[-1].message)
            status = (await request(client, "codecite/status", {}))["roots"][0]
            if len(summaries) == 1:
                first = status
                versions = sorted(str(p) for p in index.rglob("_versions/*"))
        finally:
            await client.shutdown_session()
            await client.stop()
    assert status["files_indexed"] == first["files_indexed"] >= 5
    assert "(0 written, 0 deleted" in summaries[1], summaries
    assert sorted(str(p) for p in index.rglob("_versions/*")) == versions, "index rewritten"
