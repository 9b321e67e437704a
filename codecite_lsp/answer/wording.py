"""Every sentence the user reads about a refusal, a removed statement or a gap, by name.

The texts live in ``core/wording.json``, the one data file that the CLI, hover, the VS Code chat
and the Neovim answer buffer all read; this module names them for the answering code.
"""

from __future__ import annotations

from ..core.wording import wording

_DATA = wording()
REASONS = _DATA["reasons"]
_DETAILS = _DATA["details"]
_NOTES = _DATA["notes"]

# Refusal details: each says what actually happened (no "the model found" when no model ran).
NOTHING_RELEVANT = _DETAILS["nothing_relevant"]
MODEL_FOUND_NOTHING = _DETAILS["model_found_nothing"]
OFFLINE_FOUND_NOTHING = _DETAILS["offline_found_nothing"]
OFFLINE_MISSING_TERMS = _DETAILS["offline_missing_terms"]
FAILED = _DETAILS["failed"]
FAILED_AFTER_RETRY = _DETAILS["failed_after_retry"]
MOSTLY_REMOVED = _DETAILS["mostly_removed"]
MALFORMED_REPLY = _DETAILS["malformed_reply"]

# The note under an answer that lost statements (their text is never shown).
REMOVED_ONE = _NOTES["removed_one"]
REMOVED_MANY = _NOTES["removed_many"]

# A gap span as the user sees it.
GAP = _NOTES["gap"]

# One phrase per gate failure, placed by path and lines ({where}) when there is a citation.
FAILURES = _DATA["failures"]


def removed_note(count: int) -> str:
    return REMOVED_ONE if count == 1 else REMOVED_MANY.format(count=count)
