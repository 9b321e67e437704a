"""One oversized value for each field of each codecite request (plain JSON), shared by the
server test that expects an error naming the field and the benchmark that times the replies."""

from __future__ import annotations

from typing import Any

REFUSED = {"status": "refused", "reason": "x", "detail": "y", "retrieved": []}
QUESTION = "Where is it checked?"


def _citation(**change: Any) -> dict[str, Any]:
    base = {"path": "keyvault/keys.py", "start_line": 1, "end_line": 1, "quote": "x",
            "content_hash": "", "revision": ""}  # fmt: skip
    return {**base, **change}


def _command(name: str, argument: dict[str, Any]) -> dict[str, Any]:
    return {"command": name, "arguments": [argument]}


def oversized_requests(size: int) -> list[tuple[str, str, Any, str]]:
    """(method, case name, params, the field the error must name), strings of ``size``
    characters and numbers far past any bound."""
    text, huge = "x" * size, 10**30
    ask: dict[str, Any] = {
        "question": {"question": text},
        "uri": {"question": QUESTION, "uri": "file:///" + text},
        "position.line": {"question": QUESTION, "position": {"line": huge, "character": 0}},
        "position.character": {"question": QUESTION, "position": {"line": 0, "character": huge}},
        "history": {"question": QUESTION, "history": [{"question": "q", "answer": REFUSED}] * 60},
        "history[0].question": {
            "question": QUESTION,
            "history": [{"question": text, "answer": REFUSED}],
        },
        "history[0].answer": {
            "question": QUESTION,
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
        (
            "workspace/executeCommand",
            "codecite.ask question",
            _command("codecite.ask", {"question": text}),
            "question",
        ),
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
        params = _command("codecite.openCitation", _citation(**{field: value}))
        cases.append(("workspace/executeCommand", f"openCitation {field}", params, field))
    return cases
