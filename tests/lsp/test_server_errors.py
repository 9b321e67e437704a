"""Bad input never takes the server down: each case gets a clear answer, and the next request
still works."""

from __future__ import annotations

import asyncio
import shutil
from concurrent.futures import Future
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import (
    init_params,
    position_of,
    request,
    server_config,
    wait_indexed,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from codecite_lsp.core.limits import MAX_TEXT_CHARS


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient, repo: Path):
    await lsp_client.initialize_session(init_params("visual-studio-code", repo))
    yield
    await lsp_client.shutdown_session()


async def still_answers(client: LanguageClient) -> None:
    found = await request(client, "codecite/search", {"query": "rotate_key", "limit": 5})
    assert "keyvault/keys.py" in [result["path"] for result in found["results"]]


def raw_request(client: LanguageClient, method: str, params: object) -> asyncio.Future[object]:
    """Send params as they are: the typed client API would refuse to serialise bad ones."""
    msg_id = f"raw-{method}"
    future: Future[object] = Future()
    client.protocol._request_futures[msg_id] = future
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return asyncio.wrap_future(future)


@pytest.mark.parametrize(
    ("method", "params", "says"),
    [
        ("codecite/ask", {"question": 42}, "question must be a string, got a number"),
        ("codecite/ask", {"question": "   "}, "question must be a non-empty string"),
        ("codecite/ask", ["not", "an", "object"], "params must be an object"),
        (
            "codecite/ask",
            {"question": "why?", "position": {"line": -1, "character": 0}},
            "position.line must be a whole number from 0",
        ),
        ("codecite/ask", {"question": "why?", "position": {"line": 1}}, "position.character is"),
        ("codecite/ask", {"question": "why?", "uri": 7}, "uri must be a string"),
        ("codecite/search", {"query": "keys", "limit": "ten"}, "limit must be a whole number"),
        ("codecite/search", {"query": "keys", "limit": 0}, "limit must be a whole number"),
        ("codecite/search", {}, "query is required"),
        ("codecite/history", {"limit": True}, "limit must be a whole number, got a boolean"),
        ("codecite/history", {"offset": -1}, "offset must be a whole number from 0"),
    ],
)
async def test_wrong_types_get_invalid_params(
    client: LanguageClient, method: str, params: object, says: str
):
    await wait_indexed(client)
    with pytest.raises(JsonRpcInvalidParams, match=says):
        await request(client, method, params)
    await still_answers(client)


async def test_malformed_hover_params_get_an_error_not_silence(client: LanguageClient):
    await wait_indexed(client)
    bad = {"textDocument": {"uri": "file:///x.py"}, "position": {"line": "x", "character": 0}}
    with pytest.raises(JsonRpcInvalidParams, match=r"params\.position\.line: expected int"):
        await asyncio.wait_for(raw_request(client, "textDocument/hover", bad), 10)
    await still_answers(client)


async def test_open_citation_with_bad_argument(client: LanguageClient):
    await wait_indexed(client)
    with pytest.raises(JsonRpcInvalidParams, match="exactly one object argument"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="codecite.openCitation", arguments=["keys.py"])
        )
    with pytest.raises(JsonRpcInvalidParams, match="not a citation"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="codecite.openCitation", arguments=[{"path": "keyvault/keys.py"}]
            )
        )
    with pytest.raises(JsonRpcInvalidParams, match="outside the workspace folder"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="codecite.openCitation",
                arguments=[
                    {
                        "path": "../../etc/passwd",
                        "start_line": 1,
                        "end_line": 1,
                        "quote": "root",
                        "content_hash": "",
                        "revision": "",
                    }
                ],
            )
        )
    assert client.shown_documents == []


async def test_open_citation_of_a_secret_or_ignored_file_opens_nothing(
    client: LanguageClient, repo: Path
):
    await wait_indexed(client)
    (repo / "debug.log").write_text("API_SECRET=sk-live-THISISAFAKESECRETDONOTLEAK\n")
    for path in (".env", "debug.log"):
        resolution = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="codecite.openCitation",
                arguments=[
                    {
                        "path": path,
                        "start_line": 1,
                        "end_line": 1,
                        "quote": "API_SECRET",
                        "content_hash": "",
                        "revision": "",
                    }
                ],
            )
        )
        assert resolution == {
            "state": "gone",
            "path": path,
            "reason": "not an indexed file (ignored or secret)",
        }
    assert client.shown_documents == []
    await still_answers(client)


async def test_unknown_uri(client: LanguageClient, tmp_path: Path):
    await wait_indexed(client)
    outside = tmp_path / "elsewhere.py"
    outside.write_text("def rotate_key():\n    pass\n")
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=outside.as_uri()),
            position=types.Position(line=0, character=6),
        )
    )
    assert hover is None
    with pytest.raises(JsonRpcInvalidParams, match="not inside any workspace folder"):
        await request(client, "codecite/ask", {"question": "why?", "uri": outside.as_uri()})
    with pytest.raises(JsonRpcInvalidParams, match="only file:// URIs"):
        await request(client, "codecite/ask", {"question": "why?", "uri": "untitled:Untitled-1"})
    await still_answers(client)


async def test_position_past_end_of_file(client: LanguageClient, repo: Path):
    await wait_indexed(client)
    keys = repo / "keyvault" / "keys.py"
    for position in (
        types.Position(line=10_000, character=0),
        types.Position(line=3, character=999),
    ):
        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=keys.as_uri()), position=position
            )
        )
        assert hover is None
    answer = await request(
        client,
        "codecite/ask",
        {
            "question": "How is a key rotated?",
            "uri": keys.as_uri(),
            "position": {"line": 10_000, "character": 5},
        },
    )
    assert answer["status"] in ("answered", "refused")
    await still_answers(client)


async def test_huge_question(client: LanguageClient):
    await wait_indexed(client)
    long = "How is an API key rotated? " + "padding " * 2_000
    answer = await request(client, "codecite/ask", {"question": long})
    assert answer["status"] in ("answered", "refused")
    if answer["status"] == "answered":
        assert "cut" in (answer.get("note") or "")
    # One limit for every door: a pasted file is cut to the question's first characters, not
    # refused; past MAX_TEXT_CHARS it is refused before any work, naming the field.
    pasted = await request(client, "codecite/ask", {"question": long + "x" * 80_000})
    assert pasted["status"] in ("answered", "refused")
    if pasted["status"] == "answered":
        assert "cut" in (pasted.get("note") or "")
    with pytest.raises(JsonRpcInvalidParams, match="question is too long"):
        await request(client, "codecite/ask", {"question": "x" * (MAX_TEXT_CHARS + 1)})
    await still_answers(client)


async def test_cancel_mid_request(client: LanguageClient, repo: Path):
    await wait_indexed(client)
    init = repo / "keyvault" / "__init__.py"
    params = types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=init.as_uri()),
        position=position_of(init, "rotate_key"),
    )
    for _ in range(5):  # the editor cancels hovers constantly while the cursor moves
        pending = client.protocol.send_request(types.TEXT_DOCUMENT_HOVER, params)
        msg_id = next(reversed(client.protocol._request_futures))
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        try:
            await asyncio.wait_for(asyncio.wrap_future(pending), 10)
        except JsonRpcException as exc:
            assert exc.code == -32800  # RequestCancelled
    hover = await client.text_document_hover_async(params)
    assert hover is not None
    await still_answers(client)


async def test_invalid_settings_are_reported_and_defaults_kept(repo: Path):
    client = await server_config().start()
    try:
        await client.initialize_session(
            init_params("neovim", repo, {"hover": "sometimes", "context_chunks": -3, "colour": 1})
        )
        await wait_indexed(client)
        said = " | ".join(m.message for m in client.messages)
        assert "hover must be true or false" in said
        assert "context_chunks must be positive" in said
        assert "unknown setting 'colour'" in said
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings=["not", "a", "mapping"])
        )
        await still_answers(client)
        said = " | ".join(m.message for m in client.messages)
        assert "settings must be an object" in said
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_failing_feature_is_logged_and_the_rest_keeps_working(
    client: LanguageClient, repo: Path
):
    await wait_indexed(client)
    await still_answers(client)  # the server now holds the index open
    (table,) = (repo / ".codecite").rglob("chunks.lance")
    shutil.rmtree(table)  # the index broken under the running server
    with pytest.raises(JsonRpcException, match="codecite search failed"):
        await request(client, "codecite/search", {"query": "rotate_key"})
    assert any("search failed" in m.message for m in client.log_messages)
    assert "search failed" in (repo / ".codecite" / "server.log").read_text()
    (root,) = (await request(client, "codecite/status", {}))["roots"]
    assert root["root"] == str(repo)
    assert "chunks.lance" in root["error"]
    history = await request(client, "codecite/history", {})
    assert history == {"entries": []}


async def test_a_credential_under_the_cursor_never_becomes_question_context(
    client: LanguageClient, repo: Path
) -> None:
    await wait_indexed(client)
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # built here: no key in this file
    path = repo / "keyvault" / "tokens.py"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=path.as_uri(), language_id="python", version=1, text=f"TOKEN = {token!r}\n"
            )
        )
    )
    await request(
        client,
        "codecite/ask",
        {
            "question": "how are API keys rotated?",
            "uri": path.as_uri(),
            "position": {"line": 0, "character": 12},
        },
    )
    history = (repo / ".codecite" / "history.jsonl").read_text(encoding="utf-8")
    assert "keyvault/tokens.py" in history  # the context was recorded...
    assert token not in history  # ...without the key (nor did it reach the prompt)
