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
