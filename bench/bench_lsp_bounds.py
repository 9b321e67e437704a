"""Bounded work in the language server: history pages out of 50,000 entries (first page and
offset 49,000), a hover on a 20 MB unsaved buffer with a concurrent codecite/status, 300 edits
to that buffer, and the reply to an oversized value (10 MB) in each field of each request.
Prints latencies and the server's RSS. Then, with litellm's mocked model made slow
(CODECITE_MOCK_DELAY): how soon a cancelled codecite/ask is answered RequestCancelled, and how
soon a hover gives way to the offline explanation (tests check that both happen; these are the
times they used to assert).

    python bench/bench_lsp_bounds.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from lsp_helpers import RawServer
from oversized_requests import oversized_requests

FIELD_BYTES = 10 * 1024 * 1024
EDITS = 300


def rss_mb(server: RawServer) -> float:
    for line in Path(f"/proc/{server.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def history_lines(count: int) -> str:
    citation = {
        "path": "app.py",
        "start_line": 1,
        "end_line": 2,
        "quote": "def handler(event):",
        "content_hash": "",
        "revision": "",
    }
    rows = []
    for n in range(count):
        answer = {
            "status": "answered",
            "trace_id": f"t{n}",
            "spans": [{"kind": "claim", "text": f"claim {n}", "citations": [citation]}],
        }
        rows.append(
            json.dumps(
                {"question": f"question {n}", "time": f"2026-01-01T{n:08d}", "answer": answer}
            )
        )
    return "\n".join(rows) + "\n"


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        project = base / "project"
        (project / ".codecite").mkdir(parents=True)
        (project / "app.py").write_text("def handler(event):\n    return rotate(event)\n")
        (project / ".codecite" / "history.jsonl").write_text(history_lines(50_000))
        server = RawServer(base, HOME=str(base))
        try:
            server.initialize(project)
            server.call("codecite/status", timeout=60)
            server.call("codecite/history", {"limit": 1}, timeout=120)  # imports, first reads
            before = rss_mb(server)
            started = time.monotonic()
            page = server.call("codecite/history", {"limit": 20}, timeout=120)["result"]
            took = time.monotonic() - started
            print(
                f"history page of 20 out of 50,000 entries: {took * 1000:.0f} ms, "
                f"RSS {before:.0f} -> {rss_mb(server):.0f} MB ({len(page['entries'])} entries)"
            )
            started = time.monotonic()
            page = server.call("codecite/history", {"limit": 20, "offset": 49_000}, 120)
            took = time.monotonic() - started
            print(
                f"history page of 20 at offset 49,000: {took * 1000:.0f} ms "
                f"({len(page['result']['entries'])} entries)"
            )

            rows = [
                f"def handler_{n}(event):\n    return rotate(event, {n})\n" for n in range(340_000)
            ]
            text = "".join(rows)
            uri = (project / "generated.py").as_uri()
            document = {"uri": uri, "languageId": "python", "version": 1, "text": text}
            warm = {"textDocument": {"uri": (project / "app.py").as_uri()}}
            server.call(
                "textDocument/hover", {**warm, "position": {"line": 1, "character": 12}}, 120
            )
            server.notify("textDocument/didOpen", {"textDocument": document})
            server.call("codecite/status", timeout=120)
            before = rss_mb(server)
            hover_id = server.request(
                "textDocument/hover",
                {"textDocument": {"uri": uri}, "position": {"line": 300_001, "character": 12}},
            )
            time.sleep(0.05)
            started = time.monotonic()
            server.call("codecite/status", timeout=120)
            status_took = time.monotonic() - started
            server.reply(hover_id, timeout=120)
            hover_took = time.monotonic() - started
            print(
                f"hover on a {len(text) / 1e6:.1f} MB unsaved buffer: concurrent status answered "
                f"in {status_took * 1000:.0f} ms, hover in {hover_took * 1000:.0f} ms, "
                f"RSS {before:.0f} -> {rss_mb(server):.0f} MB"
            )
            edit_buffer(server, uri)
            oversized_fields(server)
        finally:
            server.close()
        slow_model(base, project)


MODEL_DELAY = 5.0  # seconds litellm's mock waits before its reply


def slow_model(base: Path, project: Path) -> None:
    reply = base / "reply.json"
    reply.write_text(json.dumps({"spans": [], "refuse": {"reason": "no_span_in_retrieval"}}))
    server = RawServer(
        base,
        HOME=str(base),
        CODECITE_MODEL="openai/gpt-4o-mini",
        CODECITE_MOCK_RESPONSE=f"@{reply}",
        CODECITE_MOCK_DELAY=str(MODEL_DELAY),
        CODECITE_HOVER_TIMEOUT="0.5",
    )
    question = {"question": "How does handler rotate the event?"}
    try:
        server.initialize(project)
        server.call("codecite/status", timeout=60)
        server.call("codecite/ask", question, timeout=60)  # litellm imported, index open
        hover = {
            "textDocument": {"uri": (project / "app.py").as_uri()},
            "position": {"line": 0, "character": 6},
        }
        started = time.monotonic()
        server.call("textDocument/hover", hover, timeout=60)
        print(
            f"hover with hover_timeout 0.5 s and a model taking {MODEL_DELAY:.0f} s: answered "
            f"in {(time.monotonic() - started) * 1000:.0f} ms"
        )
        ask_id = server.request("codecite/ask", question)
        time.sleep(1.0)  # the model call is under way
        started = time.monotonic()
        server.notify("$/cancelRequest", {"id": ask_id})
        answer = server.reply(ask_id, timeout=60)
        code = answer.get("error", {}).get("code")
        print(
            f"codecite/ask cancelled during a {MODEL_DELAY:.0f} s model call: answered {code} "
            f"(-32800 is RequestCancelled) in {(time.monotonic() - started) * 1000:.0f} ms"
        )
    finally:
        server.close()


def edit_buffer(server: RawServer, uri: str) -> None:
    """300 one-line insertions at the top of the open 20 MB buffer, then a status request."""
    started = time.monotonic()
    for version in range(2, EDITS + 2):
        start = {"line": 0, "character": 0}
        change = {"range": {"start": start, "end": start}, "text": "#\n"}
        server.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
        )
    sent = time.monotonic()
    server.call("codecite/status", timeout=300)
    done = time.monotonic()
    print(
        f"{EDITS} edits to the 20 MB buffer: sent in {(sent - started) * 1000:.0f} ms, the next "
        f"status answered {(done - sent) * 1000:.0f} ms later, RSS {rss_mb(server):.0f} MB"
    )


def oversized_fields(server: RawServer) -> None:
    """Each oversized field: the time to its error reply, then to a status request."""
    slowest = 0.0
    for method, name, params, _field in oversized_requests(FIELD_BYTES):
        started = time.monotonic()
        reply = server.call(method, params, timeout=120)
        took = time.monotonic() - started
        status = server.call("codecite/status", timeout=120)
        status_took = time.monotonic() - started - took
        slowest = max(slowest, took)
        code = reply.get("error", {}).get("code", "no error")
        assert "result" in status, status
        print(
            f"  {method} {name} (10 MB): error {code} in {took * 1000:.0f} ms, "
            f"then status in {status_took * 1000:.0f} ms"
        )
    print(f"oversized fields: slowest reply {slowest * 1000:.0f} ms")


if __name__ == "__main__":
    main()
