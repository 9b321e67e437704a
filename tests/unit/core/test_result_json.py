"""result_json: the wire fields scripts read in process (the shared benchmark harness), and
the exact wire shape of a result merged from two chunks."""

from __future__ import annotations

from codecite_lsp.core.records import Chunk, Finding, Result
from codecite_lsp.core.responses import SearchResult, result_json
from codecite_lsp.retrieve.selection import line_range, merge_adjacent


def test_a_result_dumps_the_same_fields_as_the_servers_reply() -> None:
    chunk = Chunk("a.py", "python", 1, 2, 0, 18, "f", "function", "def f():\n    pass\n", "h", "")
    result = Result(chunk, 0.5, terms=(("bm25", 0.5),))
    assert result_json(result) == SearchResult.of(result).model_dump(mode="json")
    assert set(result_json(result)) == {
        "path", "start_line", "end_line", "symbol", "score", "content_hash", "text", "untrusted"
    }  # fmt: skip


def _chunk(start: int, text: str, symbol: str, untrusted: tuple[Finding, ...] = ()) -> Chunk:
    end = start + text.count("\n") - 1
    return Chunk(
        "a.py", "python", start, end, start * 10, start * 10 + len(text), symbol, "function",
        text, "h", "rev", ("f",), (), untrusted,
    )  # fmt: skip


def test_a_merged_result_is_on_the_wire_as_before() -> None:
    planted = (Finding("override", 2, "ignore previous"),)
    a = Result(_chunk(1, "def a():\n    x = 1\n", "A.a", planted), 0.75, (("bm25", 0.75),))
    b = Result(_chunk(3, "def b():\n    return 2\n", "A.b"), 1, (("bm25", 1.0),))
    merged = merge_adjacent([a, b])[0]
    untrusted = [{"kind": "override", "line": 2, "excerpt": "ignore previous"}]
    assert result_json(merged) == {
        "path": "a.py", "start_line": 1, "end_line": 4, "symbol": "A", "score": 1.0,
        "content_hash": "911037277a7ea5a15429de2e11b89378ed597e2112c9ac2760aeb910d2f2ba69",
        "text": "def a():\n    x = 1\ndef b():\n    return 2\n", "untrusted": untrusted,
    }  # fmt: skip
    assert result_json(line_range(merged, 2, 3)) == {
        "path": "a.py", "start_line": 2, "end_line": 3, "symbol": "A", "score": 1.0,
        "content_hash": "5056977215544984f96da7903b9063961a40e0f779d1ea306be559cd65c14584",
        "text": "    x = 1\ndef b():\n", "untrusted": untrusted,
    }  # fmt: skip
