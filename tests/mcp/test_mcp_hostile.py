"""`codecite mcp` spoken to byte by byte (issue 42): lines that are not JSON-RPC, bytes that are
not UTF-8, arguments of many megabytes. Each gets an error or is passed over, and the server
keeps answering."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
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


def _indexed(talk: Wire) -> None:
    """Until search_code answers without an indexing note (the first pass is done)."""
    deadline = time.monotonic() + 60
    while talk.call("search_code", {"query": "keys"})["result"]["structuredContent"]["note"]:
        assert time.monotonic() < deadline, "still indexing after 60 s"
        time.sleep(0.2)


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


LONE = "\udcff"  # json.dumps writes it as the escape \udcff: what a name not UTF-8 becomes


def test_lone_surrogates_in_every_argument_are_answered_and_the_server_keeps_serving(
    repo: Path,
) -> None:
    """The SDK's parser refused a line holding a lone surrogate as invalid JSON and never
    answered it: the agent waited forever."""
    cite = {"path": "keyvault/keys.py", "start_line": 54, "end_line": 54}
    with wire(repo) as talk:
        _indexed(talk)
        opened = talk.call("open_citation", {"citation": {**cite, "path": f"{LONE}.py"}})
        assert opened["result"]["isError"], opened
        assert "no such file in the workspace (U+FFFD stands for bytes" in _text(opened)

        checked = talk.call(
            "verify_citations",
            {"citations": [{**cite, "path": f"keyvault/{LONE}", "quote": ROTATE},
                           {**cite, "quote": f"old.retired_at {LONE}"}]},
        )  # fmt: skip
        first, second = checked["result"]["structuredContent"]["results"]
        assert "U+FFFD stands for bytes" in first["reason"], first
        assert second["state"] == "stale" and second["nearest"]["start_line"] == 54, second

        found = talk.call("search_code", {"query": f"rotate_key {LONE}"})
        assert found["result"]["structuredContent"]["results"], found

        answer = talk.call("ask", {"question": f"how is a key rotated {LONE}?"})
        assert answer["result"]["structuredContent"]["status"] == "answered", answer

        quoted = talk.call("open_citation", {"citation": {**cite, "quote": f"{LONE}now"}})
        assert quoted["result"]["structuredContent"]["excerpt"], quoted

        unknown = talk.call(f"search{LONE}", {"query": "x"})
        assert unknown.get("error") or unknown["result"]["isError"], unknown
        _verified(talk)


def test_bytes_that_are_not_utf8_in_arguments_are_answered(repo: Path) -> None:
    with wire(repo) as talk:
        for arguments in (
            b'{"citation": {"path": "\xff\xfe.py", "start_line": 1, "end_line": 1}}',
            b'{"citation": {"path": "keyvault/keys.py", "start_line": 54, "end_line": 54,'
            b' "quote": "old.\xc3\x28retired"}}',
        ):
            talk.next_id += 1
            call = b'{"name": "open_citation", "arguments": %s}' % arguments
            talk.send(b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": %s}'
                      % (talk.next_id, call))  # fmt: skip
            assert "result" in talk.reply(talk.next_id)
        _verified(talk)
