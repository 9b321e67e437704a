"""Limits shared by every door into the answerer (server, CLI, API): one value each."""

from __future__ import annotations

# The longest question answered, in characters: longer input is a pasted file, not a question.
MAX_QUESTION_CHARS = 4000
