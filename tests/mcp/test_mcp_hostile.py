"""`codecite mcp` spoken to byte by byte (issue 42): lines that are not JSON-RPC, bytes that are
not UTF-8, arguments of many megabytes. Each gets an error or is passed over, and the server
keeps answering."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lsp_helpers import server_env

ROTATE = "    old.retired_at = now"  # keyvault/keys.py line 54


class Wire:
    """A `codecite mcp` process and newline-delimited JSON-RPC on its stdio, raw."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, raw: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.send(json.dumps(body).encode())  # ensure_ascii: lone surrogates go as \\udcxx
        return self.reply(self.next_id)

    def reply(self, wanted: int, timeout: float = 60.0) -> dict[str, Any]:
        while True:
            message = json.loads(self.lines.get(timeout=timeout))
            if message.get("id") == wanted:
                return dict(message)

    def call(self, name: str, arguments: Any) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})


@contextmanager
def wire(repo: Path) -> Iterator[Wire]:
    process = subprocess.Popen(
        [sys.executable, "-m", "codecite_lsp", "mcp", "--repo", str(repo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=server_env(CODECITE_EMBEDDING="none"),
    )
    try:
        talk = Wire(process)
        started = talk.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        assert "result" in started, started
        talk.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        yield talk
    finally:
        process.kill()
        process.wait()


def _text(reply: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in reply["result"]["content"])


def _verified(talk: Wire) -> None:
    """The server still answers, and rightly."""
    good = {"path": "keyvault/keys.py", "start_line": 54, "end_line": 54, "quote": ROTATE}
    reply = talk.call("verify_citations", {"citations": [good]})
    assert not reply["result"].get("isError"), reply
    assert reply["result"]["structuredContent"]["results"][0]["state"] == "verified"


def test_garbage_on_the_wire_is_passed_over_and_the_server_keeps_serving(repo: Path) -> None:
    with wire(repo) as talk:
        for raw in (
            b"not json at all",
            b"\xff\xfe\x00garbage that is not UTF-8 \xc3\x28",
            b'{"jsonrpc": "2.0", "id": 900, "method": 42}',
            b'{"jsonrpc": "1.0", "id": 901, "method": "tools/list"}',
            b'{"jsonrpc": "2.0", "id": 902}',
            b"[]",
            b'{"jsonrpc": "2.0", "id": 903, "method": "tools/call", "params": "x"}',
            b'{"jsonrpc": "2.0", "id": 904, "method": "no/such/method", "params": {}}',
            b"[" * 100_000 + b"]" * 100_000,
            b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "ask"}}',
        ):
            talk.send(raw)
            _verified(talk)
        assert talk.process.poll() is None


def test_arguments_of_many_megabytes_are_refused_and_the_server_keeps_serving(
    repo: Path,
) -> None:
    with wire(repo) as talk:
        huge = "x" * (32 << 20)
        for name, arguments in (
            ("search_code", {"query": huge}),
            ("ask", {"question": huge}),
            ("open_citation", {"citation": {"path": huge, "start_line": 1, "end_line": 1}}),
            ("verify_citations", {"citations": [{"path": "a.py", "quote": huge}] * 2}),
        ):
            reply = talk.call(name, arguments)
            assert reply.get("error") or reply["result"].get("isError"), str(reply)[:300]
            _verified(talk)
        # an argument no tool takes, of megabytes: passed over, the call answered
        reply = talk.call("search_code", {"query": "keys", "extra": [list(range(1000))] * 500})
        assert reply["result"]["structuredContent"]["results"], str(reply)[:300]
