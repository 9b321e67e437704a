"""Every sentence the user reads about a refusal, a removed statement or a gap, in one place.

The lead merges these into the shared wording data file read by Python, TypeScript and Lua (issue
9); until then the Python side reads them from here. No text here names an internal label (S2,
span 4): the user sees paths and lines.
"""

from __future__ import annotations

REASONS = {
    "no_span_in_retrieval": "Nothing in the indexed code answers this question.",
    "unverified_citation": (
        "The answer's citations could not be verified against the code, so it was withheld."
    ),
    "ambiguous": "The question matches several unrelated places; please make it more specific.",
    "stale_index": "The index is out of date for the files involved; re-index and ask again.",
    "model_error": "The model gave no usable answer.",
}

# Refusal details: each says what actually happened (no "the model found" when no model ran).
NOTHING_RELEVANT = "no indexed code is relevant enough to answer this question"
MODEL_FOUND_NOTHING = "the model found no answer in the retrieved code"
OFFLINE_FOUND_NOTHING = (
    "no lines of the retrieved code hold the question's key terms together "
    "(offline answerer: no model was asked)"
)
OFFLINE_MISSING_TERMS = (
    "the retrieved code never mentions {terms} (offline answerer: no model was asked)"
)
FAILED = "the answer failed verification: {failures}"
FAILED_AFTER_RETRY = "the answer failed verification after a retry: {failures}"
MOSTLY_REMOVED = (
    "{removed} of {total} statements in the answer could not be verified, too many to show "
    "the rest: {failures}"
)
MALFORMED_REPLY = "the model's reply was not in the expected form, even after a retry"

# The note under an answer that lost statements (their text is never shown).
REMOVED_ONE = "1 statement could not be verified against the code and was removed."
REMOVED_MANY = "{count} statements could not be verified against the code and were removed."

# A gap span as the user sees it.
GAP = "Not shown in the retrieved code: {what}."

# One phrase per gate failure, placed by path and lines ({where}) when there is a citation.
FAILURES = {
    "unknown_label": "a citation named a source that was not retrieved",
    "empty_quote": "{where}: a citation quoted nothing",
    "bad_line_range": "{where}: the cited line range is reversed",
    "lines_outside_source": "{where}: the cited lines are outside what was retrieved",
    "quote_has_line_numbers": "{where}: the quote includes line numbers",
    "quote_not_found": "{where}: the quoted text is not in the file",
    "lines_do_not_hold_quote": "{where}: the quoted text is not on those lines",
    "quote_cuts_token": "{where}: the quote starts or ends inside a word",
    "quote_too_trivial": "{where}: the quote is too short to show anything",
    "no_citation": "a statement had no citation",
    "no_claim": "the answer made no cited statement",
    "prose_states_fact": "a statement about the code had no citation",
    "gap_states_fact": "a note about missing code said more than what was missing",
    "malformed_reply": "the reply was not in the expected form",
}


def removed_note(count: int) -> str:
    return REMOVED_ONE if count == 1 else REMOVED_MANY.format(count=count)
