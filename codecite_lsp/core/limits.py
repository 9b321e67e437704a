"""Limits shared by every door into the answerer (server, MCP, CLI, API): one value each.

Each field a request carries is bounded here and checked before any work (lsp/params.py,
mcp/models.py, cli/run.py), so a hostile or confused client costs no more than a normal request.
"""

from __future__ import annotations

# The longest question answered, in characters: longer input is a pasted file, not a question;
# the answerer cuts it to this and says so.
MAX_QUESTION_CHARS = 4000
# Any free text a request carries (a question, a query, a question of the history): up to this it
# is cut as above; beyond it the request is refused, since even cutting it means reading it and
# the steps before the cut (follow-up terms) scale with it.
MAX_TEXT_CHARS = 100_000
# A conversation sent back with a follow-up: only its last turns are used (answer/followup.py),
# so beyond these it is not a chat.
MAX_TURNS = 50
MAX_ANSWER_CHARS = 200_000  # one earlier answer, as JSON
MAX_URI_CHARS = 4096
MAX_PATH_CHARS = 1024
MAX_QUERY_CHARS = 1000  # an agent's search query (MCP); the editor's is a question
MAX_QUOTE_CHARS = 20_000
MAX_CITATIONS = 50
# A call's quotes together: a quote against a 1 MB file costs up to ~0.5 s to match, so 50
# quotes of the longest kind would hold a worker for half a minute.
MAX_TOTAL_QUOTE_CHARS = 100_000
MAX_LINE = 10_000_000
MAX_RESULTS = 50  # an agent's search results
MAX_LIMIT = 200  # an editor's page of results or history
MAX_HISTORY_OFFSET = 10_000_000
MAX_HASH_CHARS = 128  # a sha256 in hex is 64
