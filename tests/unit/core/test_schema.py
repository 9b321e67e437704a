"""The generated wire types: the JSON schema, and the TypeScript and LuaCATS declarations made
from it, are what the pydantic models say (no node or Neovim needed), and the schema describes
what the server really sends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import pytest

from codecite_lsp.core import schema, typegen
from codecite_lsp.core.answers import Exact, RefusalReason
from codecite_lsp.core.responses import (
    EmbedderStatus,
    HistoryPage,
    HistoryRecord,
    ResolvedCitation,
    RootStatus,
    StatusReply,
)

ROOT = Path(__file__).resolve().parents[3]
REGENERATE = (
    "run `python -m codecite_lsp.core.schema docs/answer.schema.json "
    "--ts editors/vscode/src/answer.schema.d.ts --lua editors/nvim/lua/codecite/types.lua` "
    "(CONTRIBUTING.md)"
)
GENERATED: list[tuple[str, Callable[[], str]]] = [
    ("docs/answer.schema.json", schema.render),
    ("editors/vscode/src/answer.schema.d.ts", schema.render_typescript),
    ("editors/nvim/lua/codecite/types.lua", schema.render_lua),
]


@pytest.mark.parametrize(("path", "render"), GENERATED, ids=[path for path, _ in GENERATED])
def test_committed_file_is_what_the_models_generate(path: str, render: Callable[[], str]) -> None:
    committed = (ROOT / path).read_text(encoding="utf-8")
    assert committed == render(), f"{path} is stale: {REGENERATE}"


def test_the_generator_writes_the_files_the_check_compares(tmp_path: Path) -> None:
    out = [tmp_path / "s.json", tmp_path / "s.d.ts", tmp_path / "types.lua"]
    assert schema.main([str(out[0]), "--ts", str(out[1]), "--lua", str(out[2])]) == 0
    assert [path.read_text("utf-8") for path in out] == [render() for _, render in GENERATED]


def test_every_reply_is_in_the_schema_and_named_in_both_languages() -> None:
    definitions = schema.answer_schema()["$defs"]
    typescript, lua = schema.render_typescript(), schema.render_lua()
    for name in schema.ROOTS:
        assert name in definitions
        assert f"export type {name} =" in typescript or f"export interface {name} {{" in typescript
        assert f"---@class codecite.{name}\n" in lua or f"---@alias codecite.{name} " in lua


def test_schema_tells_the_variants_apart_and_names_every_refusal_reason() -> None:
    definitions = schema.answer_schema()["$defs"]
    assert definitions["Answered"]["required"][0] == "status"
    assert definitions["ClaimSpan"]["required"][0] == "kind"
    assert definitions["Moved"]["required"][0] == "state"
    reasons = definitions["Refused"]["properties"]["reason"]["enum"]
    assert reasons == list(get_args(RefusalReason))
    # a field holding an Answer or a Resolution names the union, not its variants again
    assert definitions["HistoryRecord"]["properties"]["answer"] == {"$ref": "#/$defs/Answer"}


def _status(**changes: Any) -> dict[str, Any]:
    embedder = EmbedderStatus(name="default", state="ready", vectors=3, error="")
    root = RootStatus(
        root="/repo",
        index_dir="/repo/.codecite",
        files_indexed=2,
        chunks=3,
        pending=0,
        indexing=False,
        last_update=None,
        embedder=embedder,
        meaning=EmbedderStatus(name="minilm-l6-int8-64", state="ready", vectors=3, error=""),
        error=None,
        skipped_count=0,
        skipped=[],
    )
    return StatusReply(roots=[root.model_copy(update=changes)]).model_dump(mode="json")


def test_a_reply_as_sent_validates_against_its_schema_and_keeps_its_nulls() -> None:
    sent = _status()
    assert sent["roots"][0]["last_update"] is None and sent["roots"][0]["error"] is None
    assert StatusReply.model_validate(sent).model_dump(mode="json") == sent
    record = HistoryRecord.model_validate(
        {
            "question": "q",
            "time": "2026-12-01T00:00:00+00:00",
            "answer": {"status": "answered", "spans": [{"kind": "prose", "text": "so"}]},
            "root": "/repo",
            "citations": [],
        }
    )
    page = HistoryPage(entries=[record]).model_dump(mode="json")
    assert page["entries"][0]["answer"]["note"] is None  # sent as null, as before


def test_resolved_lines_are_omitted_when_absent_not_sent_as_null() -> None:
    bare = Exact(path="a.py", start_line=1, end_line=2)
    assert "lines" not in bare.model_dump(mode="json")
    shown = bare.model_copy(update={"lines": ["a", "b"]}).model_dump(mode="json")
    assert shown["lines"] == ["a", "b"]
    citation = {
        "path": "a.py",
        "start_line": 1,
        "end_line": 2,
        "quote": "a",
        "content_hash": "h",
        "revision": "r",
    }
    resolved = ResolvedCitation.model_validate({"citation": citation, "resolution": shown})
    assert resolved.model_dump(mode="json")["resolution"] == shown


def test_an_unknown_schema_construct_is_refused_not_typed_as_any() -> None:
    odd = {"$defs": {"Odd": {"properties": {"x": {"type": "tuple"}}, "required": ["x"]}}}
    with pytest.raises(ValueError, match="no type for the schema node"):
        typegen.typescript(odd)
    with pytest.raises(ValueError, match="no type for the schema node"):
        typegen.lua(odd)


def test_lua_makes_a_nullable_field_optional_and_typescript_keeps_null() -> None:
    lua = schema.render_lua()
    typescript = schema.render_typescript()
    assert "---@field last_update? number " in lua  # a null member reaches Lua as nil
    assert "  last_update: number | null;" in typescript
