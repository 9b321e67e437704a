"""The offline hover of a symbol, through the citation gate: what a user reads when hovering."""

from __future__ import annotations

from codecite_lsp.answer.hover import Hovered, extractive_answer
from codecite_lsp.core.answers import ClaimSpan
from codecite_lsp.core.records import Source, outside_source

TOKENS = (
    '"""Signed session tokens."""\n\nimport time\n\n'
    "# Tokens older than this are refused.\nTOKEN_TTL_SECONDS = 3600\n\n\n"
    "def verify_token(issued: int) -> bool:\n"
    "    return time.time() - issued <= TOKEN_TTL_SECONDS\n"
)
CALLER = "from tokens import TOKEN_TTL_SECONDS\n\nexpires = issued + TOKEN_TTL_SECONDS\n"


def definition_claim(
    symbol: str, sources: list[Source], hovered: Hovered | None = None
) -> ClaimSpan:
    """The hover's first claim: what it says defines ``symbol``."""
    answer = extractive_answer(symbol, sources, hovered)
    assert answer is not None
    return next(s for s in answer.spans if isinstance(s, ClaimSpan))


def test_hovering_a_constant_quotes_the_line_that_gives_it_its_value() -> None:
    sources = [
        outside_source("S1", "app/session.py", 1, 3, CALLER),
        outside_source("S2", "app/tokens.py", 1, 10, TOKENS),
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
        outside_source("S1", "lib/response.js", 120, 124, SEND_FILE),
        outside_source("S2", "lib/response.js", 40, 44, RESPONSE_TOP),
    ]
    first = definition_claim("res", sources)
    assert first.text.startswith("`res` is defined in lib/response.js"), first.text
    assert first.citations[0].quote == "var res = Object.create(http.ServerResponse.prototype)"
    assert "require" not in first.citations[0].quote  # `http` is imported, not defined, here


APPLICATION_TOP = (
    "var app = exports = module.exports = {};\n"
    "\n"
    "app.init = function init() {\n"
    "  this.cache = Object.create(null);\n"
    "};\n"
)
USE_CHECKS = (
    "app.use = function use(fn) {\n"
    "  if (typeof fn !== 'function') {\n"
    "    throw new TypeError('app.use() requires a middleware function')\n"
    "  }\n"
    "  var router = app.router;\n"
    "  return this;\n"
    "};\n"
)


def test_a_hovers_use_is_a_line_using_the_name_in_code_not_a_message_saying_it() -> None:
    sources = [
        outside_source("S1", "lib/application.js", 40, 44, APPLICATION_TOP),
        outside_source("S2", "lib/application.js", 200, 206, USE_CHECKS, symbol="app.use"),
    ]
    answer = extractive_answer("app", sources, Hovered("lib/application.js", 43))
    assert answer is not None
    uses = [
        c.quote
        for s in answer.spans
        if isinstance(s, ClaimSpan) and s.text.startswith("Used in")
        for c in s.citations
    ]
    assert uses == ["var router = app.router;"], uses


QUOTE = (
    "def quote(string: str, safe: str) -> str:\n"
    '    """\n'
    "    Use percent-encoding to quote a string.\n"
    "\n"
    "    * `string`: The string to be percent-escaped.\n"
    '    """\n'
    "    parts = []\n"
    "    for match in re.finditer(PERCENT_ENCODED_REGEX, string):\n"
    "        parts.append(match.group(0))\n"
    '    return "".join(parts)\n'
)
RENDER_HEADERS = (
    "    def render_headers(self) -> bytes:\n"
    '        if not hasattr(self, "_headers"):\n'
    "            parts = [\n"
    '                b"Content-Disposition: form-data; ",\n'
    '                _format_form_param("name", self.name),\n'
    "            ]\n"
    "            if self.filename:\n"
    '                parts.extend([b"; ", filename])\n'
    '            self._headers = b"".join(parts)\n'
    "        return self._headers\n"
)


def test_hovering_a_local_quotes_its_own_assignment_and_no_docstring_above_another() -> None:
    # httpx: hovering `parts` in _multipart.py's render_headers said "`parts` is defined in
    # _urlparse.py: `string`: The string to be percent-escaped.", quoting quote()'s docstring.
    sources = [
        outside_source("S1", "_urlparse.py", 495, 504, QUOTE, symbol="quote"),
        outside_source(
            "S2", "_multipart.py", 186, 195, RENDER_HEADERS, symbol="MultipartFile.render_headers"
        ),
    ]
    first = definition_claim("parts", sources, Hovered("_multipart.py", 193))
    assert first.text == "`parts` is defined in _multipart.py:", first.text
    quoted = first.citations[0].quote  # the whole statement, its items with it
    assert quoted.startswith("parts = [") and quoted.endswith("]"), quoted
    assert "_format_form_param" in quoted
    # Hovered in quote() itself, the definition is quote()'s local, and the docstring closing
    # above it is not its documentation.
    first = definition_claim("parts", sources, Hovered("_urlparse.py", 503))
    assert first.text == "`parts` is defined in _urlparse.py:", first.text
    assert [c.quote for c in first.citations] == ["parts = []"]


FUNCTION_NAME = (
    "func function(pc uintptr) string {\n"
    "\tfn := runtime.FuncForPC(pc)\n"
    "\tname := fn.Name()\n"
    "\t// The name includes the path name to the package, which is unnecessary\n"
    "\tif lastSlash := strings.LastIndexByte(name, '/'); lastSlash >= 0 {\n"
    "\t\tname = name[lastSlash+1:]\n"
    "\t}\n"
    "\treturn name\n"
    "}\n"
)


def test_a_comment_under_an_assignment_is_not_its_documentation() -> None:
    # gin's recovery.go: "`name` is defined in recovery.go: The name includes the path name to
    # the package, which is unnecessary", the comment about the line below it.
    sources = [outside_source("S1", "recovery.go", 170, 178, FUNCTION_NAME, symbol="function")]
    first = definition_claim("name", sources)
    assert first.text == "`name` is defined in recovery.go:", first.text
    assert [c.quote for c in first.citations] == ["name := fn.Name()"]
