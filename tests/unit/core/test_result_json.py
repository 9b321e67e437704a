"""result_json: the wire fields scripts read in process (the shared benchmark harness)."""

from __future__ import annotations

from codecite_lsp.core.records import Chunk, Result
from codecite_lsp.core.responses import SearchResult, result_json


def test_a_result_dumps_the_same_fields_as_the_servers_reply() -> None:
    chunk = Chunk("a.py", "python", 1, 2, 0, 18, "f", "function", "def f():\n    pass\n", "h", "")
    result = Result(chunk, 0.5, terms=(("bm25", 0.5),))
    assert result_json(result) == SearchResult.of(result).model_dump(mode="json")
    assert set(result_json(result)) == {
        "path", "start_line", "end_line", "symbol", "score", "content_hash", "text", "untrusted"
    }  # fmt: skip
