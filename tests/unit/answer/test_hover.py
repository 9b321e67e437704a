"""The offline hover of a symbol, through the citation gate: what a user reads when hovering."""

from __future__ import annotations

from codecite_lsp.answer.hover import extractive_answer
from codecite_lsp.core.answers import ClaimSpan
from codecite_lsp.core.records import Source

TOKENS = (
    '"""Signed session tokens."""\n\nimport time\n\n'
    "# Tokens older than this are refused.\nTOKEN_TTL_SECONDS = 3600\n\n\n"
    "def verify_token(issued: int) -> bool:\n"
    "    return time.time() - issued <= TOKEN_TTL_SECONDS\n"
)
CALLER = "from tokens import TOKEN_TTL_SECONDS\n\nexpires = issued + TOKEN_TTL_SECONDS\n"


def test_hovering_a_constant_quotes_the_line_that_gives_it_its_value() -> None:
    sources = [
        Source("S1", "app/session.py", 1, 3, CALLER),
        Source("S2", "app/tokens.py", 1, 10, TOKENS),
    ]
    answer = extractive_answer("TOKEN_TTL_SECONDS", sources)
    assert answer is not None
    claims = [s for s in answer.spans if isinstance(s, ClaimSpan)]
    first = claims[0]
    assert first.text.startswith("`TOKEN_TTL_SECONDS` is defined in app/tokens.py")
    cited = first.citations[0]
    assert (cited.path, cited.start_line) == ("app/tokens.py", 5)  # its comment, then the value
    assert "TOKEN_TTL_SECONDS = 3600" in cited.quote
    uses = {c.path: c.quote for claim in claims[1:] for c in claim.citations}
    assert uses["app/session.py"] == "expires = issued + TOKEN_TTL_SECONDS"


RESPONSE_TOP = (
    "var http = require('http');\n"
    "\n"
    "var res = Object.create(http.ServerResponse.prototype)\n"
    "\n"
    "module.exports = res\n"
)
SEND_FILE = (
    "res.sendFile = function sendFile(path, options, callback) {\n"
    "  var done = callback;\n"
    "  var res = this;\n"
    "  return res.stream(path, done);\n"
    "};\n"
)


def test_hovering_a_module_variable_quotes_its_module_level_value_not_a_local_of_that_name() -> (
    None
):
    # Retrieval ranked the function with a local `res` first; the hover said `res` was
    # `var res = this;`.
    sources = [
        Source("S1", "lib/response.js", 120, 124, SEND_FILE),
        Source("S2", "lib/response.js", 40, 44, RESPONSE_TOP),
    ]
    answer = extractive_answer("res", sources)
    assert answer is not None
    first = next(s for s in answer.spans if isinstance(s, ClaimSpan))
    assert first.text.startswith("`res` is defined in lib/response.js"), first.text
    assert first.citations[0].quote == "var res = Object.create(http.ServerResponse.prototype)"
    assert "require" not in first.citations[0].quote  # `http` is imported, not defined, here
