"""Limits shared by every door into the answerer (server, CLI, API): one value each."""

from __future__ import annotations

# The longest question answered, in characters: longer input is a pasted file, not a question.
# The answerer cuts it there and says so; the server refuses text past the wire limit below.
MAX_QUESTION_CHARS = 4000
