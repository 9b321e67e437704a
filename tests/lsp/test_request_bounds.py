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
from oversized_requests import REFUSED, oversized_requests
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pytest_lsp import LanguageClient

BIG = 10 * 1024 * 1024  # characters of an oversized string field, far past MAX_TEXT_CHARS
# Generous: a frozen server never answers at all, a working one answers in well under a second.
NO_REPLY = 60.0


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


async def test_a_long_word_under_the_bound_is_searched_while_status_is_answered(
    client: LanguageClient,
):
    """Names in a query were found by regexes tried at every character of a word: a query of
    one 90,000-character word held the GIL for minutes (search reads the query uncut)."""
    await wait_indexed(client)
    search = asyncio.ensure_future(
        request(client, "codecite/search", {"query": "rotate_key " + "x" * 90_000})
    )
    await status_answered(client)
    found = await asyncio.wait_for(search, NO_REPLY)
    assert isinstance(found["results"], list)


def _typed(method: str, params: Any) -> Any:
    """The typed client API serialises executeCommand params only as the lsprotocol type."""
    if method == "workspace/executeCommand":
        return types.ExecuteCommandParams(params["command"], params["arguments"])
    return params


CASES = oversized_requests(BIG)


async def test_an_oversized_value_in_any_field_gets_an_error_naming_it(client: LanguageClient):
    """One server for every case (each spawn costs seconds): after each error, status."""
    await wait_indexed(client)
    failures = []
    for method, name, params, field in CASES:
        reply = asyncio.ensure_future(
            client.protocol.send_request_async(method, _typed(method, params))
        )
        try:
            await status_answered(client)  # while the oversized request is in flight
            answer = await asyncio.wait_for(reply, NO_REPLY)
            failures.append(f"{method} {name}: answered {str(answer)[:80]}")
        except JsonRpcInvalidParams as exc:
            if not re.search(rf"(^|\W){re.escape(field)} ", str(exc)):
                failures.append(f"{method} {name}: the error does not name {field}: {exc}")
        except (JsonRpcException, TimeoutError) as exc:
            failures.append(f"{method} {name}: {exc!r}"[:300])
    assert failures == []
    await status_answered(client)
