"""The JSON schema of the wire types in :mod:`.answers` (docs/answer.schema.json).

Generated, never written by hand: the VS Code extension's TypeScript types are generated from it
in turn, so the pydantic models stay the one definition of an Answer. Regenerate with
``python -m codecite_lsp.core.schema docs/answer.schema.json`` (CONTRIBUTING.md); the editor tests
fail when the committed file is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from .answers import Answer, Resolution

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


def answer_schema() -> dict[str, Any]:
    """One schema document: ``Answer`` at the root, ``Resolution`` and every part in ``$defs``."""
    named: dict[str, TypeAdapter[Any]] = {
        "Answer": TypeAdapter(Answer),
        "Resolution": TypeAdapter(Resolution),
    }
    keys, schema = TypeAdapter.json_schemas(
        [(name, "validation", adapter) for name, adapter in named.items()]
    )
    definitions: dict[str, Any] = _tidy(schema["$defs"])
    for definition in definitions.values():
        _require_discriminators(definition)
    for name in named:
        definitions[name] = {"title": name, **keys[(name, "validation")]}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Answer",
        "description": (
            "codecite's wire types (docs/contracts.md), generated from "
            "codecite_lsp/core/answers.py: do not edit."
        ),
        "$ref": "#/$defs/Answer",
        "$defs": dict(sorted(definitions.items())),
    }


def render() -> str:
    return json.dumps(answer_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m codecite_lsp.core.schema OUTPUT.json", file=sys.stderr)
        return 2
    Path(argv[0]).write_text(render(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
