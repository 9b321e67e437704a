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


# The same texts by name, for the answering code (gate, retry feedback, pipeline).
_DATA = wording()
REASONS = _DATA["reasons"]
_DETAILS = _DATA["details"]
_NOTES = _DATA["notes"]

# Refusal details: each says what actually happened (no "the model found" when no model ran).
NOTHING_RELEVANT = _DETAILS["nothing_relevant"]
MODEL_FOUND_NOTHING = _DETAILS["model_found_nothing"]
OFFLINE_FOUND_NOTHING = _DETAILS["offline_found_nothing"]
OFFLINE_WEAK_EVIDENCE = _DETAILS["offline_weak_evidence"]
# Offline answers: what they are, and how to have a model explain instead.
OFFLINE_NOTE = _NOTES["offline"]
OFFLINE_LOCAL = _NOTES["offline_local"]
FAILED = _DETAILS["failed"]
FAILED_AFTER_RETRY = _DETAILS["failed_after_retry"]
MOSTLY_REMOVED = _DETAILS["mostly_removed"]
MALFORMED_REPLY = _DETAILS["malformed_reply"]

# The note under an answer that lost statements (their text is never shown).
REMOVED_ONE = _NOTES["removed_one"]
REMOVED_MANY = _NOTES["removed_many"]

# Claims the optional second check (support_check = "model") found unsupported: the note, and
# the refusal when none is left.
UNSUPPORTED_ONE = _NOTES["unsupported_one"]
UNSUPPORTED_MANY = _NOTES["unsupported_many"]
NONE_SUPPORTED = _DETAILS["none_supported"]
UNCHECKED = _DETAILS["unchecked"]  # the second check failed: fail closed (names the error)

# Retrieval found only places whose files no longer hold their indexed lines (retrieve/on_disk).
INDEX_DIFFERS = _DETAILS["index_differs"]
INDEX_FORGED = _DETAILS["index_forged"]

# Why a statement resting on a planted file was left out (names the files).
UNTRUSTED = _NOTES["untrusted"]

# A gap span as the user sees it.
GAP = _NOTES["gap"]

# One phrase per gate failure, placed by path and lines ({where}) when there is a citation.
FAILURES = _DATA["failures"]


def removed_note(count: int) -> str:
    return REMOVED_ONE if count == 1 else REMOVED_MANY.format(count=count)


def unsupported_note(count: int) -> str:
    return UNSUPPORTED_ONE if count == 1 else UNSUPPORTED_MANY.format(count=count)
