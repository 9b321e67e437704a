"""Limits shared by every door into the answerer (server, CLI, API): one value each."""

from __future__ import annotations

# The longest question answered, in characters: longer input is a pasted file, not a question;
# every door (CLI, server, MCP, API) goes through the answerer, which cuts it and says so.
MAX_QUESTION_CHARS = 4000
