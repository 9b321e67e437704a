"""The words users read when there is no answer, from ``wording.json`` (package data).

One file for every client: Python renders the CLI and hover text with it, and the language server
hands the same data to the editors (request ``codecite/wording``) so the VS Code chat and the
Neovim answer buffer never keep a copy that drifts.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, TypedDict


class Wording(TypedDict):
    reasons: dict[str, str]
    labels: dict[str, str]
    details: dict[str, str]
    notes: dict[str, str]
    failures: dict[str, str]


@cache
def wording() -> Wording:
    raw: dict[str, Any] = json.loads(
        resources.files(__package__).joinpath("wording.json").read_text("utf-8")
    )
    return {
        "reasons": dict(raw["reasons"]),
        "labels": dict(raw["labels"]),
        "details": dict(raw["details"]),
        "notes": dict(raw["notes"]),
        "failures": dict(raw["failures"]),
    }


def reason(code: str) -> str:
    """The sentence for a refusal reason; a reason this version does not know still reads well."""
    data = wording()
    return data["reasons"].get(code, data["labels"]["unknown_reason"])


def label(key: str) -> str:
    return wording()["labels"][key]
