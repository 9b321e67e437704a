"""Which definition a hover quotes: the hovered file's own before another file's, and the lines
around the hovered one first (a function's local). A real index of a small repository, the real
hover explanation (offline); the cases are from express and httpx."""

from __future__ import annotations

import json
import threading
from urllib.parse import unquote

import pytest
from lsp_helpers import COMMAND_LINK, indexed_session

from codecite_lsp.service.hover import explain
from codecite_lsp.service.session import Session

FILES = {
    "lib/express.js": "exports = module.exports = createApplication;\n\n"
    "function createApplication() {\n"
    "  var app = function(req, res, next) {\n"
    "    app.handle(req, res, next);\n"
    "  };\n"
    "  app.init();\n"
    "  return app;\n"
    "}\n",
    "lib/application.js": "var app = exports = module.exports = {};\n\n"
    "app.init = function init() {\n"
    "  this.cache = Object.create(null);\n"
    "  this.settings = Object.create(null);\n"
    "};\n\n"
    "app.use = function use(fn) {\n"
    "  if (typeof fn !== 'function') {\n"
    "    throw new TypeError('app.use() requires a middleware function')\n"
    "  }\n"
    "  this.stack.push(fn);\n"
    "  return this;\n"
    "};\n",
    "pkg/urlparse.py": "import re\n\n\ndef quote(string: str, safe: str) -> str:\n"
    '    """\n    Use percent-encoding to quote a string.\n\n'
    '    * `string`: The string to be percent-escaped.\n    """\n'
    "    parts = []\n"
    '    for match in re.finditer(r"%[0-9A-Fa-f]{2}", string):\n'
    "        parts.append(match.group(0))\n"
    '    return "".join(parts)\n',
    "pkg/multipart.py": "class FileField:\n"
    "    def render_headers(self) -> bytes:\n"
    '        if not hasattr(self, "_headers"):\n'
    "            parts = [\n"
    '                b"Content-Disposition: form-data; ",\n'
    "                self.name.encode(),\n"
    "            ]\n"
    "            if self.filename:\n"
    '                parts.extend([b"; ", self.filename.encode()])\n'
    '            self._headers = b"".join(parts)\n'
    "        return self._headers\n",
    "pkg/decoders.py": "class LineDecoder:\n"
    "    def __init__(self) -> None:\n"
    "        self.buffer: list[str] = []\n"
    "        self.trailing_cr: bool = False\n"
    "\n"
    "    def decode(self, text: str) -> list[str]:\n"
    "        if self.trailing_cr:\n"
    '            text = "\\r" + text\n'
    "        return text.splitlines()\n",
    "pkg/limits.py": "class Timeout:\n"
    "    def __eq__(self, other: object) -> bool:\n"
    "        return isinstance(other, Timeout) and self.connect == other.connect\n"
    "\n\n"
    "class Limits:\n"
    "    def __eq__(self, other: object) -> bool:\n"
    "        return (\n"
    "            isinstance(other, self.__class__)\n"
    "            and self.max_connections == other.max_connections\n"
    "        )\n"
    "\n"
    "    def total(self, counts: list[int]) -> int:\n"
    "        result = 0\n"
    "        for count in counts:\n"
    "            result += count\n"
    "        return result\n",
    "bind/context.go": "package bind\n\n"
    "type Context struct {\n\tKeys map[string]any\n}\n\n"
    "// Bind decodes the request into obj.\n"
    "func (c *Context) Bind(obj any) error {\n"
    "\tif obj == nil {\n\t\treturn nil\n\t}\n"
    '\tc.Keys["bound"] = obj\n'
    "\treturn nil\n"
    "}\n",
    # A guide's example gives the alias a value too: a page is no definition.
    "docs/timeouts.md": "# Timeouts\n\n```python\nTimeoutTypes = float\n```\n",
    # A module-level alias among many, annotated in more chunks than a keyword search returns.
    "pkg/types.py": "from typing import Optional, Tuple, Union\n\n"
    + "".join(f"Alias{n} = Union[str, Tuple[str, int]]\n" for n in range(40))
    + "TimeoutTypes = Union[Optional[float], Tuple[float, float]]\n",
    **{
        f"pkg/client{n}.py": "from .types import TimeoutTypes\n\n\n"
        + "".join(
            f"def call_{n}_{m}(url: str, timeout: TimeoutTypes = None) -> TimeoutTypes:\n"
            f'    """Call {n}.{m} within ``timeout`` (TimeoutTypes)."""\n'
            + "".join(f"    step_{k} = url.count({k!r})\n" for k in range(30))
            + "    return timeout\n\n\n"
            for m in range(10)
        )
        for n in range(12)
    },
}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return indexed_session(tmp_path_factory.mktemp("hover-scope") / "repo", FILES)


def hover(session: Session, rel: str, line_text: str, word: str) -> list[tuple[str, str, int]]:
    """The hover's claims: (sentence, the quote it links first, that quote's first line)."""
    text = FILES[rel]
    line = text.split("\n").index(line_text)
    character = line_text.index(word)
    markdown = explain(
        session, session.root / rel, text, line, character, "utf-16", threading.Event()
    )
    assert markdown is not None
    claims = []
    for said in markdown.split("\n"):
        if links := COMMAND_LINK.findall(said):
            first = json.loads(unquote(links[0]))[0]
            claims.append((said.split(": [")[0], first["quote"], first["start_line"]))
    return claims


def definition_claim(session: Session, rel: str, line_text: str, word: str) -> tuple[str, str]:
    """(the hover's first sentence, what defines the name; the quote it links first)."""
    claim, quote, _ = hover(session, rel, line_text, word)[0]
    return claim, quote


def test_a_module_variable_is_the_hovered_files_own_not_another_files_local(
    session: Session,
) -> None:
    claim, quote = definition_claim(
        session, "lib/application.js", "app.init = function init() {", "app"
    )
    assert claim == "`app` is defined in lib/application.js", claim
    assert quote == "var app = exports = module.exports = {};"
    # In express.js it is createApplication's own.
    claim, quote = definition_claim(session, "lib/express.js", "  app.init();", "app")
    assert claim == "`app` is a local of `createApplication` in lib/express.js", claim
    assert quote == "var app = function(req, res, next) {"


def test_a_local_is_the_enclosing_functions_own_assignment_without_a_docstring_above_it(
    session: Session,
) -> None:
    hovered = '                parts.extend([b"; ", self.filename.encode()])'
    claim, quote = definition_claim(session, "pkg/multipart.py", hovered, "parts")
    assert claim == "`parts` is a local of `render_headers` in pkg/multipart.py", claim
    assert quote.startswith("parts = [") and "self.name.encode()" in quote, quote
    claim, quote = definition_claim(
        session, "pkg/urlparse.py", "        parts.append(match.group(0))", "parts"
    )
    assert claim == "`parts` is a local of `quote` in pkg/urlparse.py", claim  # no docstring
    assert quote == "parts = []"


def test_an_attribute_is_defined_where_its_object_first_gives_it_a_value(session: Session) -> None:
    claim, quote = definition_claim(
        session, "pkg/decoders.py", "        if self.trailing_cr:", "trailing_cr"
    )
    assert claim == "`trailing_cr` is defined in pkg/decoders.py", claim
    assert quote == "self.trailing_cr: bool = False"


def test_a_module_level_value_used_everywhere_is_found_where_it_is_given(session: Session) -> None:
    # httpx's `TimeoutTypes`: the hover listed two imports of it and no definition.
    claim, quote = definition_claim(
        session, "pkg/client3.py", "from .types import TimeoutTypes", "TimeoutTypes"
    )
    assert claim == "`TimeoutTypes` is defined in pkg/types.py", claim
    assert quote == "TimeoutTypes = Union[Optional[float], Tuple[float, float]]"


def test_a_parameter_is_its_own_functions_and_so_are_its_uses(session: Session) -> None:
    # httpx: hovering `other` in Limits.__eq__ listed `isinstance(other, self.__class__)` of
    # Timeout.__eq__ and uses in other files as its uses.
    claims = hover(
        session, "pkg/limits.py", "            isinstance(other, self.__class__)", "other"
    )
    assert claims[0] == (
        "`other` is a parameter of `__eq__` in pkg/limits.py",
        "def __eq__(self, other: object) -> bool:",
        7,  # Limits.__eq__, not Timeout's on line 2
    ), claims
    uses = claims[1:]
    assert [line for _, _, line in uses] == [9, 10], uses
    assert all("pkg/limits.py (__eq__)" in said for said, _, _ in uses), uses


def test_a_loop_variable_and_a_local_are_bound_where_the_function_binds_them(
    session: Session,
) -> None:
    claims = hover(session, "pkg/limits.py", "            result += count", "count")
    assert claims[0][:2] == (
        "`count` is a local of `total` in pkg/limits.py",
        "for count in counts:",
    )
    claims = hover(session, "pkg/limits.py", "        return result", "result")
    assert claims[0][:2] == ("`result` is a local of `total` in pkg/limits.py", "result = 0")
    assert [q for _, q, _ in claims[1:]] == ["result += count", "return result"], claims


def test_a_go_methods_parameter_and_receiver(session: Session) -> None:
    claims = hover(session, "bind/context.go", "\tif obj == nil {", "obj")
    assert claims[0][:2] == (
        "`obj` is a parameter of `Bind` in bind/context.go",
        "func (c *Context) Bind(obj any) error {",
    ), claims
    claims = hover(session, "bind/context.go", '\tc.Keys["bound"] = obj', "c")
    assert claims[0][0] == "`c` is a parameter of `Bind` in bind/context.go", claims
    # `Keys` after `c.` is the struct's field, not a local.
    claims = hover(session, "bind/context.go", '\tc.Keys["bound"] = obj', "Keys")
    assert "parameter" not in claims[0][0] and "local" not in claims[0][0], claims
