"""A real MCP client (the SDK's stdio client session) against a real `codecite mcp` process."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from lsp_helpers import server_env
from mcp import ClientSession, StdioServerParameters, stdio_client


def server_params(repo: Path, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "codecite_lsp", "mcp", "--repo", str(repo)],
        env=server_env(**env),
    )


@asynccontextmanager
async def connect(repo: Path, **env: str) -> AsyncIterator[ClientSession]:
    async with (
        stdio_client(server_params(repo, **env)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> Any:
    """The tool's structured result; a tool error fails the test with its message."""
    result = await session.call_tool(name, arguments)
    assert not result.is_error, text_of(result)
    return result.structured_content


async def call_error(session: ClientSession, name: str, arguments: Any) -> str:
    """The message of a call that must fail as a tool error (not a crash, not a success)."""
    result = await session.call_tool(name, arguments)
    assert result.is_error, text_of(result)
    return text_of(result)


def text_of(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def wait_indexed(session: ClientSession, timeout: float = 90.0) -> None:
    """Until search_code answers without an indexing note (the first pass is done)."""
    deadline = time.monotonic() + timeout
    while True:
        found = await call(session, "search_code", {"query": "rotate_key", "limit": 1})
        if found["note"] is None:
            return
        assert time.monotonic() < deadline, f"still indexing after {timeout} s: {found['note']}"
        await anyio.sleep(0.3)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
