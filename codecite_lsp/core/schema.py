"""The JSON schema of the wire types in :mod:`.answers` and :mod:`.responses`
(docs/answer.schema.json): every reply the server sends, plus the wording file's shape.

Generated, never written by hand: the VS Code extension's TypeScript types and the Neovim
plugin's LuaCATS classes are generated from it in turn (:mod:`.typegen`), so the pydantic models
stay the one definition of each shape. Regenerate all three with the command in CONTRIBUTING.md
("Regenerating the schema"); tests/unit/core/test_schema.py fails when a committed file is stale.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, get_type_hints

from pydantic import BaseModel, TypeAdapter, create_model

from . import typegen
from .answers import Answer, AnswerSnapshot, Resolution
from .responses import HistoryPage, LocalModelsReply, ReindexReply, SearchReply, StatusReply
from .wording import Wording

_DISCRIMINATORS = ("status", "kind", "state")


def _tidy(node: Any) -> Any:
    """Drop per-property titles: code generators turn each into a named alias ("Status",
    "Trace Id") that nobody wants; the model titles on ``$defs`` stay."""
    if isinstance(node, dict):
        tidy = {key: _tidy(value) for key, value in node.items()}
        if isinstance(tidy.get("properties"), dict):
            for prop in tidy["properties"].values():
                prop.pop("title", None)
        return tidy
    if isinstance(node, list):
        return [_tidy(item) for item in node]
    return node


def _require_discriminators(definition: dict[str, Any]) -> None:
    """pydantic marks ``kind: Literal["claim"] = "claim"`` optional (it has a default) but the
    server always sends it, and a client can only tell the variants apart when it is required."""
    properties = definition.get("properties", {})
    required = definition.setdefault("required", [])
    for name in _DISCRIMINATORS:
        if "const" in properties.get(name, {}) and name not in required:
            required.insert(0, name)


def _name_unions(node: Any, unions: dict[str, Any]) -> Any:
    """A field typed ``Answer`` or ``Resolution`` refers to that named union: pydantic writes the
    variants out again, and the generated types would then say ``Answered | Refused``."""
    if isinstance(node, list):
        return [_name_unions(item, unions) for item in node]
    if not isinstance(node, dict):
        return node
    for name, union in unions.items():
        if "oneOf" in node and node["oneOf"] == union["oneOf"]:
            kept = {key: node[key] for key in ("description",) if key in node}
            return {"$ref": f"#/$defs/{name}", **kept}
    return {key: _name_unions(value, unions) for key, value in node.items()}


def _model_of(typed: type) -> type[BaseModel]:
    """A TypedDict as a model: pydantic reads a ``typing.TypedDict`` only from Python 3.12."""
    fields: dict[str, Any] = {key: (kind, ...) for key, kind in get_type_hints(typed).items()}
    return create_model(typed.__name__, **fields)


# The replies, by the request that returns them (docs/contracts.md).
ROOTS: dict[str, Any] = {
    "Answer": Answer,  # codecite/ask, `codecite ask --json`, the MCP tool ask
    "AnswerSnapshot": AnswerSnapshot,  # codecite/ask's partial results ($/progress)
    "Resolution": Resolution,  # codecite.openCitation
    "SearchReply": SearchReply,  # codecite/search, `codecite search --json`
    "StatusReply": StatusReply,  # codecite/status
    "HistoryPage": HistoryPage,  # codecite/history
    "Wording": _model_of(Wording),  # codecite/wording
    "ReindexReply": ReindexReply,  # codecite.reindex
    "LocalModelsReply": LocalModelsReply,  # codecite/localModels
}


def answer_schema() -> dict[str, Any]:
    """One schema document: ``Answer`` at the root, every other reply and part in ``$defs``."""
    named = {name: TypeAdapter(kind) for name, kind in ROOTS.items()}
    keys, schema = TypeAdapter.json_schemas(
        [(name, "validation", adapter) for name, adapter in named.items()]
    )
    definitions: dict[str, Any] = _tidy(schema["$defs"])
    for definition in definitions.values():
        _require_discriminators(definition)
    unions = {  # a model is in $defs already, by its name
        name: {"title": name, **keys[(name, "validation")]}
        for name in named
        if name not in definitions
    }
    definitions = {**_name_unions(definitions, unions), **unions}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Answer",
        "description": (
            "codecite's wire types (docs/contracts.md), generated from "
            "codecite_lsp/core/answers.py and responses.py: do not edit."
        ),
        "$ref": "#/$defs/Answer",
        "$defs": dict(sorted(definitions.items())),
    }


def render() -> str:
    return json.dumps(answer_schema(), indent=2, ensure_ascii=False) + "\n"


def render_typescript() -> str:
    return typegen.typescript(answer_schema())


def render_lua() -> str:
    return typegen.lua(answer_schema())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m codecite_lsp.core.schema")
    parser.add_argument("output", type=Path, help="the JSON schema (docs/answer.schema.json)")
    parser.add_argument("--ts", type=Path, help="also the TypeScript declarations (.d.ts)")
    parser.add_argument("--lua", type=Path, help="also the LuaCATS classes (types.lua)")
    args = parser.parse_args(argv)
    outputs = [(args.output, render), (args.ts, render_typescript), (args.lua, render_lua)]
    for path, make in outputs:
        if path is not None:
            path.write_text(make(), encoding="utf-8", newline="\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
