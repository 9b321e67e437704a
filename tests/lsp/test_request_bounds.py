"""Every field of every codecite request is bounded (core/limits.py): an oversized value gets an
InvalidParams error naming the field, and the server goes on answering (a real server process
over stdio). bench/bench_lsp_bounds.py prints how long each of these replies takes."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_helpers import init_params, request, server_config, wait_indexed
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

BIG = 10 * 1024 * 1024  # characters of an oversized string field, far past MAX_TEXT_CHARS
# Generous: a frozen server never answers at all, a working one answers in well under a second.
NO_REPLY = 60.0
REFUSED = {"status": "refused", "reason": "x", "detail": "y", "retrieved": []}


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient, repo: Path):
    await lsp_client.initialize_session(init_params("visual-studio-code", repo))
    yield
    await lsp_client.shutdown_session()


async def status_answered(client: LanguageClient) -> None:
    status = await asyncio.wait_for(request(client, "codecite/status", {}), NO_REPLY)
    assert isinstance(status, dict)


async def test_huge_history_question_is_refused_while_status_is_answered(client: LanguageClient):
    await wait_indexed(client)
    turn = {"question": "x" * 300_000, "answer": REFUSED}
    ask = asyncio.ensure_future(
        request(client, "codecite/ask", {"question": "Where is it checked?", "history": [turn]})
    )
    await status_answered(client)  # the ask does not hold the server up
    with pytest.raises(JsonRpcInvalidParams, match=r"history\[0\]\.question is too long"):
        await asyncio.wait_for(ask, NO_REPLY)
    await status_answered(client)


async def test_long_history_question_is_answered_while_status_is_answered(client: LanguageClient):
    """Under the bound, a long earlier question is cut like a question and answered: its terms
    no longer cost time quadratic in its length (30,000 characters froze the server)."""
    await wait_indexed(client)
    turn = {"question": "x" * 30_000, "answer": REFUSED}
    ask = asyncio.ensure_future(
        request(client, "codecite/ask", {"question": "Where is it checked?", "history": [turn]})
    )
    await status_answered(client)
    answer = await asyncio.wait_for(ask, NO_REPLY)
    assert answer["status"] in ("answered", "refused")


def _citation(**change: Any) -> dict[str, Any]:
    base = {
        "path": "keyvault/keys.py",
        "start_line": 1,
        "end_line": 1,
        "quote": "x",
        "content_hash": "",
        "revision": "",
    }
    return {**base, **change}


def _open(**change: Any) -> tuple[str, Any]:
    return _command("codecite.openCitation", _citation(**change))


def _command(name: str, argument: dict[str, Any]) -> tuple[str, Any]:
    return "workspace/executeCommand", types.ExecuteCommandParams(name, [argument])


def _cases() -> list[tuple[str, str, Any, str]]:
    text = "x" * BIG
    huge = 10**30
    question = "Where is it checked?"
    ask: dict[str, Any] = {
        "question": {"question": text},
        "uri": {"question": question, "uri": "file:///" + text},
        "position.line": {"question": question, "position": {"line": huge, "character": 0}},
        "position.character": {"question": question, "position": {"line": 0, "character": huge}},
        "history": {"question": question, "history": [{"question": "q", "answer": REFUSED}] * 60},
        "history[0].question": {
            "question": question,
            "history": [{"question": text, "answer": REFUSED}],
        },
        "history[0].answer": {
            "question": question,
            "history": [{"question": "q", "answer": {**REFUSED, "detail": text}}],
        },
    }
    cases = [("codecite/ask", field, params, field) for field, params in ask.items()]
    cases += [
        ("codecite/search", "query", {"query": text}, "query"),
        ("codecite/search", "limit", {"query": "keys", "limit": huge}, "limit"),
        ("codecite/search", "uri", {"query": "keys", "uri": "file:///" + text}, "uri"),
        ("codecite/history", "limit", {"limit": huge}, "limit"),
        ("codecite/history", "offset", {"offset": huge}, "offset"),
        ("workspace/executeCommand", "codecite.ask question", *_ask_command(text)),
    ]
    for field, value in [
        ("path", text),
        ("root", text),
        ("quote", text),
        ("start_line", huge),
        ("end_line", huge),
        ("start_byte", huge),
        ("content_hash", text),
        ("revision", text),
        ("quote_hash", text),
        ("chunk_hash", text),
    ]:
        method, params = _open(**{field: value})
        cases.append((method, f"openCitation {field}", params, field))
    return cases


def _ask_command(text: str) -> tuple[Any, str]:
    return _command("codecite.ask", {"question": text})[1], "question"


CASES = _cases()


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [(method, params, field) for method, _, params, field in CASES],
    ids=[f"{method} {name}" for method, name, _, _ in CASES],
)
async def test_oversized_field_gets_an_error_naming_it(
    client: LanguageClient, method: str, params: Any, field: str
):
    await wait_indexed(client)
    reply = asyncio.ensure_future(client.protocol.send_request_async(method, params))
    await status_answered(client)
    with pytest.raises(JsonRpcInvalidParams, match=rf"(^|\W){re.escape(field)} "):
        await asyncio.wait_for(reply, NO_REPLY)
    await status_answered(client)
