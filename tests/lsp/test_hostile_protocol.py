"""Hostile input at the protocol level, over raw pipes: broken frames, requests out of order,
malformed JSON and params. Every case must cost at most the bad message: the next valid request
is answered. Bounded in time (each reply is awaited at most 10 s); the counts of trials and passes
are printed at the end (docs/benchmarks.md quotes them).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsp_helpers import RawServer

TALLY: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def report_counts(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    line = f"hostile protocol input: {TALLY['trials']} trials, {TALLY['passed']} passed"
    if reporter is not None:
        reporter.write_line(line)
    else:
        print(line)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("def handler(event):\n    return event\n", encoding="utf-8")
    return root


def frame(body: bytes, length: int | None = None, header: bytes = b"Content-Length", eol=b"\r\n"):
    size = len(body) if length is None else length
    return header + b": " + str(size).encode() + eol + eol + body


def status_request(msg_id: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "codecite/status"}).encode()


BODY = status_request("bad-frame")

# (name, bytes of the bad frame, is the bad frame itself expected to be answered?)
FRAMING: list[tuple[str, bytes, bool]] = [
    ("lower-case header name", frame(BODY, header=b"content-length"), True),
    ("upper-case header name", frame(BODY, header=b"CONTENT-LENGTH"), True),
    ("LF-only line ends", frame(BODY, eol=b"\n"), True),
    ("extra Content-Type header", b"Content-Length: %d\r\nContent-Type: x\r\n\r\n" % len(BODY)
     + BODY, True),
    ("non-numeric Content-Length", b"Content-Length: abc\r\n\r\n" + BODY, False),
    ("negative Content-Length", b"Content-Length: -5\r\n\r\n" + BODY, False),
    ("Content-Length too short", frame(BODY, len(BODY) - 10), False),
    ("Content-Length too long", frame(BODY, len(BODY) + 50), False),
    ("truncated frame", frame(BODY)[:-7], False),
    ("Content-Length 10^12", frame(BODY, 1_000_000_000_000), False),
    ("Content-Length 2*10^9", frame(BODY, 2_000_000_000), False),
    ("Content-Length 0", frame(b"", 0), False),
    ("garbage between frames", b"\x00\xffhello\r\n\r\nworld", False),
    ("no blank line after the header", b"Content-Length: %d\r\n" % len(BODY) + BODY, False),
    ("body not UTF-8", frame(BODY[:-1] + b"\xff}"), False),
    ("body not JSON", frame(b"{not json"), False),
    ("10 KB header line", b"Content-Length: 5\r\nX-Junk: " + b"a" * 10_000 + b"\r\n", False),
]  # fmt: skip


def trial(name: str, check: Callable[[], None], failures: list[str]) -> None:
    TALLY["trials"] += 1
    try:
        check()
    except AssertionError as exc:
        failures.append(f"{name}: {exc}")
    else:
        TALLY["passed"] += 1


def test_a_framing_error_costs_only_the_bad_message(raw: RawServer, project: Path):
    assert "capabilities" in raw.initialize(project)["result"]
    failures: list[str] = []
    for number, (name, data, answered) in enumerate(FRAMING):

        def check(data: bytes = data, answered: bool = answered, number: int = number) -> None:
            raw.send_raw(data)
            if answered:
                assert "result" in raw.reply("bad-frame"), "the valid frame was not answered"
            reply = raw.call("codecite/status", timeout=10)
            assert "result" in reply, f"the next request got {reply}"

        trial(name, check, failures)
    assert failures == []
    log = raw.stderr_path.read_text(errors="replace")
    assert "LSP framing error" in log  # each one logged, not silent
    assert "refused a Content-Length of 1000000000000 bytes" in log


def test_parse_errors_get_a_reply_with_a_null_id(raw: RawServer, project: Path):
    raw.initialize(project)
    failures: list[str] = []
    for name, body in [
        ("not JSON", b"{not json"),
        ("not UTF-8", b'{"jsonrpc": "2.0", "id": "x", "method": "codecite/status"\xff}'),
        ("empty body", b""),
    ]:

        def check(body: bytes = body) -> None:
            raw.send_raw(frame(body, len(body)))
            error = raw.reply(None)["error"]
            assert error["code"] == -32700, error

        trial(f"parse error: {name}", check, failures)
    assert failures == []


def expect_error(raw: RawServer, method: str, params: Any, code: int, says: str = "") -> None:
    reply = raw.call(method, params)
    assert "error" in reply, f"{method} answered {reply}"
    assert reply["error"]["code"] == code, reply["error"]
    assert says in reply["error"]["message"], reply["error"]["message"]


def test_life_cycle_errors_as_lsp_prescribes(raw: RawServer, project: Path):
    failures: list[str] = []
    steps: list[tuple[str, Callable[[], None]]] = [
        ("request before initialize", lambda: expect_error(raw, "codecite/status", None, -32002)),
        ("hover before initialize", lambda: expect_error(raw, "textDocument/hover", {
            "textDocument": {"uri": (project / "app.py").as_uri()},
            "position": {"line": 0, "character": 5}}, -32002)),
        ("notification before initialize is dropped", lambda: raw.notify(
            "workspace/didChangeConfiguration", {"settings": {"hover": False}})),
        ("shutdown before initialize", lambda: expect_error(raw, "shutdown", None, -32002)),
        ("malformed initialize", lambda: expect_error(
            raw, "initialize", {"processId": "x", "capabilities": {}}, -32602, "processId")),
        ("initialize after an early shutdown", lambda: assert_result(raw.initialize(project))),
        ("second initialize", lambda: expect_error(
            raw, "initialize", {"processId": None, "capabilities": {}}, -32600, "already")),
        ("a request once initialized", lambda: assert_result(raw.call("codecite/status"))),
        ("shutdown", lambda: assert_result(raw.call("shutdown"), allow_null=True)),
        ("request after shutdown", lambda: expect_error(raw, "codecite/status", None, -32600)),
        ("initialize after shutdown", lambda: expect_error(
            raw, "initialize", {"processId": None, "capabilities": {}}, -32600)),
        ("exit after shutdown ends the process with 0", lambda: exits(raw, 0)),
    ]  # fmt: skip
    for name, step in steps:
        trial(name, step, failures)
    assert failures == []


def assert_result(reply: dict[str, Any], allow_null: bool = False) -> None:
    assert "result" in reply, reply
    assert allow_null or reply["result"] is not None, reply


def exits(raw: RawServer, code: int) -> None:
    raw.notify("exit")
    assert raw.proc.wait(timeout=10) == code


def test_not_a_json_rpc_message_is_an_invalid_request(raw: RawServer, project: Path):
    raw.initialize(project)
    failures: list[str] = []
    for name, body, msg_id in [
        ("a JSON array", b"[1, 2]", None),
        ("a JSON number", b"42", None),
        ("no jsonrpc field", b'{"id": "n1", "method": "codecite/status"}', "n1"),
        ("jsonrpc 1.0", b'{"jsonrpc": "1.0", "id": "n2", "method": "codecite/status"}', "n2"),
        ("a null body", b"null", None),
        ("a string body", b'"x"', None),
        ("method is a number", b'{"jsonrpc": "2.0", "id": "m5", "method": 5}', "m5"),
        ("method is an object", b'{"jsonrpc": "2.0", "id": "mo", "method": {}}', "mo"),
    ]:

        def check(body: bytes = body, msg_id: str | None = msg_id) -> None:
            raw.send_raw(frame(body))
            error = raw.reply(msg_id)["error"]
            assert error["code"] == -32600, error
            assert_result(raw.call("codecite/status"))

        trial(f"invalid request: {name}", check, failures)
    uri = (project / "app.py").as_uri()
    for name, message in [  # nobody waits for an answer to these: the next request still works
        ("no method nor id", {"jsonrpc": "2.0"}),
        ("notification with wrong params", {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                                            "params": {"textDocument": {"uri": 3}}}),
        ("notification with params of the wrong type", {
            "jsonrpc": "2.0", "method": "textDocument/didChange", "params": [uri]}),
        ("response to an unknown request", {"jsonrpc": "2.0", "id": "nobody", "result": 1}),
        ("cancel of an unknown request", {"jsonrpc": "2.0", "method": "$/cancelRequest",
                                          "params": {"id": "nobody"}}),
        ("unknown notification", {"jsonrpc": "2.0", "method": "x/unknown", "params": {}}),
    ]:  # fmt: skip

        def survives(message: dict[str, Any] = message) -> None:
            raw.send(message)
            assert_result(raw.call("codecite/status"))

        trial(f"malformed message: {name}", survives, failures)

    def odd_id() -> None:
        raw.send({"jsonrpc": "2.0", "id": {"an": "object"}, "method": "codecite/status"})
        assert raw.reply(None)["error"]["code"] in (-32600, -32602)
        assert_result(raw.call("codecite/status"))

    trial("malformed message: an id that is an object", odd_id, failures)
    assert failures == []


def test_wrong_params_get_invalid_params_naming_the_field(raw: RawServer, project: Path):
    raw.initialize(project)
    uri = (project / "app.py").as_uri()
    cases: list[tuple[str, Any, str]] = [
        ("textDocument/hover", {"textDocument": {"uri": uri},
                                "position": {"line": "x", "character": 0}}, "line"),
        ("textDocument/hover", "not an object", "hover"),
        ("textDocument/hover", {"position": {"line": 0, "character": 0}}, "textDocument"),
        ("textDocument/hover", {"textDocument": {"uri": uri}, "position": None}, "position"),
        ("codecite/ask", {"question": 42}, "question"),
        ("codecite/ask", {"question": "why?", "position": {"line": -1, "character": 0}},
         "position.line"),
        ("codecite/search", ["query"], "params must be an object"),
        ("codecite/search", {"query": "x", "limit": 1.5}, "limit"),
        ("codecite/history", {"limit": "many"}, "limit"),
        ("workspace/executeCommand", {"command": "codecite.openCitation", "arguments": ["x"]},
         "one object argument"),
        ("workspace/executeCommand", {"command": "codecite.openCitation",
                                      "arguments": [{"path": 3}]}, "path"),
    ]  # fmt: skip
    failures: list[str] = []
    for method, params, says in cases:
        trial(
            f"invalid params: {method} {json.dumps(params)[:40]}",
            lambda method=method, params=params, says=says: expect_error(
                raw, method, params, -32602, says
            ),
            failures,
        )
    assert failures == []
    assert_result(raw.call("codecite/status"))


def test_deep_nesting_is_a_parse_error_at_the_frame(raw: RawServer, project: Path):
    """100,000 nested arrays made the JSON parser raise RecursionError: no reply at all."""
    raw.initialize(project)
    failures: list[str] = []
    depth = 100_000
    for name, params in [
        ("arrays", b"[" * depth + b"]" * depth),
        ("objects", b'{"a":' * depth + b"1" + b"}" * depth),
    ]:

        def check(params: bytes = params) -> None:
            body = b'{"jsonrpc": "2.0", "id": "deep", "method": "codecite/search", "params": '
            raw.send_raw(frame(body + params + b"}"))
            error = raw.reply(None)["error"]
            assert error["code"] == -32700, error
            assert "nested" in error["message"], error
            assert_result(raw.call("codecite/status"))

        trial(f"deep nesting: {name}", check, failures)
    # Brackets inside strings are text, not nesting.
    bracketed = {"query": "[" * 10_000, "limit": 1}
    trial(
        "brackets in a string",
        lambda: assert_result(raw.call("codecite/search", bracketed, timeout=60)),
        failures,
    )
    assert failures == []


def test_a_nul_in_an_open_citation_path_is_invalid_params(raw: RawServer, project: Path):
    raw.initialize(project)
    citation = {"path": "app.py\u0000.txt", "start_line": 1, "end_line": 1, "quote": "def",
                "content_hash": "", "revision": ""}  # fmt: skip
    for argument in (citation, {**citation, "path": "app.py", "root": str(project) + "\u0000"}):
        command = {"command": "codecite.openCitation", "arguments": [argument]}
        expect_error(raw, "workspace/executeCommand", command, -32602, "NUL")
    assert_result(raw.call("codecite/status"))


def test_lone_surrogates_in_requests_are_served_as_u_fffd(raw: RawServer, project: Path):
    """A lone surrogate (what a JavaScript string or json.dumps of a name not UTF-8 may hold)
    failed every answer with InternalError ("'utf-8' codec can't encode ... surrogates")."""
    lone = "\udcff"
    raw.initialize(project)
    deadline = time.monotonic() + 30
    while raw.call("codecite/status")["result"]["roots"][0]["files_indexed"] < 1:
        assert time.monotonic() < deadline, "the project was not indexed within 30 s"
        time.sleep(0.2)
    question = {"question": f"what does handler {lone} return?"}
    for method, params in (
        ("codecite/ask", question),
        ("workspace/executeCommand", {"command": "codecite.ask", "arguments": [question]}),
    ):
        answer = raw.call(method, params, timeout=30)
        assert answer.get("result", {}).get("status") == "answered", answer
    entries = raw.call("codecite/history", {})["result"]["entries"]
    assert entries[0]["question"] == "what does handler \ufffd return?", entries[0]
    found = raw.call("codecite/search", {"query": f"handler {lone}"})["result"]["results"]
    assert [result["path"] for result in found] == ["app.py"]
    citation = {"path": f"{lone}.py", "start_line": 1, "end_line": 1, "quote": f"def {lone}",
                "content_hash": lone, "revision": lone}  # fmt: skip
    command = {"command": "codecite.openCitation", "arguments": [citation]}
    assert raw.call("workspace/executeCommand", command)["result"]["state"] == "gone"
