"""Result.to_json: the wire fields scripts read in process (the shared benchmark harness)."""

from __future__ import annotations

from codecite_lsp.core.records import Result
from codecite_lsp.core.responses import SearchResult


def test_a_result_dumps_the_same_fields_as_the_servers_reply() -> None:
    result = Result("a.py", 1, 2, "f", 0.5, "h", "def f():\n    pass\n", terms=(("bm25", 0.5),))
    assert result.to_json() == SearchResult.of(result).model_dump(mode="json")
    assert set(result.to_json()) == {
        "path", "start_line", "end_line", "symbol", "score", "content_hash", "text", "untrusted"
    }  # fmt: skip
