"""The language server end to end: a real client over stdio, a real index on disk.

Each test runs twice, with the capabilities of VS Code and of Neovim.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_helpers import (
    copy_repo,
    hover_at,
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

# The servers read scripted model replies from here (llm.py's CODECITE_MOCK_RESPONSE=@file);
# each test that asks a "model" writes its reply first.
MOCK_FILE = Path(tempfile.gettempdir()) / f"codecite-mock-replies-{os.getpid()}.json"


@pytest_lsp.fixture(
    config=server_config(CODECITE_MOCK_RESPONSE=f"@{MOCK_FILE}", CODECITE_SUPPORT_CHECK="off"),
    params=["visual-studio-code", "neovim"],
)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, repo: Path):
    MOCK_FILE.write_text(json.dumps({"spans": [], "refuse": {"reason": "no_span_in_retrieval"}}))
    result = await lsp_client.initialize_session(init_params(request.param, repo))
    assert result.capabilities.hover_provider
    commands = result.capabilities.execute_command_provider
    assert commands is not None
    assert {"codecite.openCitation", "codecite.reindex", "codecite.ask"} <= set(commands.commands)
    yield
    await lsp_client.shutdown_session()
    MOCK_FILE.unlink(missing_ok=True)


async def test_initialize_answers_and_indexing_reports_progress(client: LanguageClient):
    # How fast initialize answers is a figure, printed by bench/bench_server.py, not a bound here.
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
    hover = await hover_at(client, init, "rotate_key")
    markdown = hover_markdown(hover)
    keys = (repo / "keyvault" / "keys.py").read_text().splitlines()
    definition_line = next(i for i, line in enumerate(keys, 1) if "def rotate_key" in line)
    citations = linked_citations(markdown)
    assert any(
        c["path"] == "keyvault/keys.py" and c["start_line"] <= definition_line <= c["end_line"]
        for c in citations
    ), markdown
    assert f"keyvault/keys.py:L{citations[0]['start_line']}" in markdown  # plain-text fallback


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
                "text": "The old key is marked retired.",
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
    hover = await hover_at(client, init, "rotate_key")
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


async def test_two_workspace_folders_each_get_their_own_index(tmp_path: Path):
    """A document belongs to the folder that holds it; folders can come and go."""
    first, second = copy_repo(tmp_path / "a"), copy_repo(tmp_path / "b")
    (second / "keyvault" / "only_here.py").write_text("def only_in_second():\n    return 2\n")
    client = await server_config().start()
    try:
        params = init_params("visual-studio-code", first)
        params.workspace_folders = [types.WorkspaceFolder(uri=first.as_uri(), name="a")]
        await client.initialize_session(params)
        await wait_indexed(client)
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[types.WorkspaceFolder(uri=second.as_uri(), name="b")], removed=[]
                )
            )
        )
        await wait_indexed(client, count=2)
        status = await request(client, "codecite/status", {})
        assert {root["root"] for root in status["roots"]} == {str(first), str(second)}

        target = second / "keyvault" / "only_here.py"
        hover = await hover_at(client, target, "only_in_second")
        (citation, *_) = linked_citations(hover_markdown(hover))
        assert citation["path"] == "keyvault/only_here.py"
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="codecite.openCitation", arguments=[citation])
        )
        assert client.shown_documents[-1].uri == target.as_uri()
    finally:
        await client.shutdown_session()
        await client.stop()


def big_repo(tmp_path: Path) -> Path:
    """The sample repository plus 1500 modules: indexing takes seconds, not milliseconds."""
    repo = copy_repo(tmp_path)
    (repo / "generated").mkdir()
    for number in range(1500):
        (repo / "generated" / f"module_{number}.py").write_text(
            "".join(f"def f{number}_{i}(x):\n    return x + {i}\n\n\n" for i in range(20))
        )
    return repo


async def test_answers_during_indexing_say_the_index_is_unfinished(tmp_path: Path):
    repo = big_repo(tmp_path)
    client = await server_config().start()
    try:
        await client.initialize_session(init_params("visual-studio-code", repo))

        async def status() -> dict[str, Any]:
            return (await request(client, "codecite/status", {}))["roots"][0]

        await wait_for(status, lambda root: root["pending"] > 100)
        target = repo / "generated" / "module_1499.py"
        answer = await request(
            client,
            "codecite/ask",
            {
                "question": "What does f1499_3 return?",
                "uri": target.as_uri(),
                "position": {"line": 12, "character": 5},
            },
        )
        assert answer["status"] == "refused"
        assert answer["reason"] == "stale_index"
        assert "generated/module_1499.py is not indexed yet" in answer["detail"]

        init = repo / "keyvault" / "__init__.py"
        hover = await hover_at(client, init, "rotate_key")
        assert "indexing is still running" in hover_markdown(hover)
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_indexing_can_be_cancelled_from_the_progress_bar(tmp_path: Path):
    repo = big_repo(tmp_path)  # enough work that the cancel arrives mid-run
    client = await server_config().start()
    try:
        await client.initialize_session(init_params("neovim", repo))

        async def begun() -> list[Any]:
            return [token for token, values in client.progress_reports.items() if values]

        (token,) = await wait_for(begun, bool)
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        await wait_indexed(client)
        assert "cancelled" in (progress_ends(client)[-1].message or "")
        status = (await request(client, "codecite/status", {}))["roots"][0]
        assert status["files_indexed"] < 1500

        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="codecite.reindex", arguments=[])
        )
        await wait_indexed(client, count=2, timeout=300)
        status = (await request(client, "codecite/status", {}))["roots"][0]
        assert status["files_indexed"] >= 1505
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_no_hover_inside_a_secret_file(client: LanguageClient, repo: Path):
    await wait_indexed(client)
    env = repo / ".env"
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=env.as_uri()),
            position=types.Position(line=0, character=len(env.read_text().split("=")[0]) + 3),
        )
    )
    assert hover is None
    found = await request(client, "codecite/search", {"query": env.read_text(), "limit": 10})
    assert all(result["path"] != ".env" for result in found["results"])


async def test_open_citation_follows_unsaved_edits_and_says_when_lines_are_gone(
    client: LanguageClient, repo: Path
):
    await wait_indexed(client)
    init = repo / "keyvault" / "__init__.py"
    hover = await hover_at(client, init, "rotate_key")
    citation = next(
        c for c in linked_citations(hover_markdown(hover)) if c["path"] == "keyvault/keys.py"
    )
    keys = repo / citation["path"]
    # Two lines typed above the cited span, not saved: the buffer is what counts.
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=keys.as_uri(),
                language_id="python",
                version=1,
                text="# a\n# b\n" + keys.read_text(),
            )
        )
    )
    moved = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="codecite.openCitation", arguments=[citation])
    )
    assert moved["state"] == "moved"
    assert (moved["start_line"], moved["end_line"]) == (
        citation["start_line"] + 2,
        citation["end_line"] + 2,
    )
    assert client.shown_documents[-1].selection.start.line == citation["start_line"] + 1

    # The cited code rewritten in the buffer: the file opens, and the user is told why.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=keys.as_uri(), version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="# rewritten\n")],
        )
    )
    stale = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="codecite.openCitation", arguments=[citation])
    )
    assert stale["state"] == "stale"
    assert client.shown_documents[-1].uri == keys.as_uri()
    assert client.shown_documents[-1].selection is None
    assert "changed" in client.messages[-1].message

    client.text_document_did_close(
        types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=keys.as_uri())
        )
    )
    keys.unlink()
    shown = len(client.shown_documents)
    gone = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="codecite.openCitation", arguments=[citation])
    )
    assert gone["state"] == "gone"
    assert len(client.shown_documents) == shown  # nothing opened
    assert "gone" in client.messages[-1].message


async def test_ask_works_as_a_command(client: LanguageClient, repo: Path):
    await wait_indexed(client)
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="codecite.ask", arguments=[{"question": "How long is the grace period?"}]
        )
    )
    assert answer["status"] == "answered", answer
    cited = {c["path"] for s in answer["spans"] if s["kind"] == "claim" for c in s["citations"]}
    assert cited & {"keyvault/keys.py", "docs/operations.md"}
