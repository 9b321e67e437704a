"""Which definition a hover quotes: the hovered file's own before another file's, and the lines
around the hovered one first (a function's local). A real index of a small repository, the real
hover explanation (offline); the cases are from express and httpx."""

from __future__ import annotations

import json
import threading
from urllib.parse import unquote

import pytest
from lsp_helpers import COMMAND_LINK, indexed_session

from codecite_lsp.lsp.features.hover import explain
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


def definition_claim(session: Session, rel: str, line_text: str, word: str) -> tuple[str, str]:
    """(the hover's "defined in" sentence, the quote it links first)."""
    text = FILES[rel]
    line = text.split("\n").index(line_text)
    character = line_text.index(word)
    markdown = explain(
        session, session.root / rel, text, line, character, "utf-16", threading.Event()
    )
    assert markdown is not None
    claim = next(line for line in markdown.split("\n") if " is defined in " in line)
    first = json.loads(unquote(COMMAND_LINK.findall(claim)[0]))[0]
    return claim.split(": [")[0], first["quote"]


def test_a_module_variable_is_the_hovered_files_own_not_another_files_local(
    session: Session,
) -> None:
    claim, quote = definition_claim(
        session, "lib/application.js", "app.init = function init() {", "app"
    )
    assert claim == "`app` is defined in lib/application.js", claim
    assert quote == "var app = exports = module.exports = {};"
    claim, quote = definition_claim(session, "lib/express.js", "  app.init();", "app")
    assert claim == "`app` is defined in lib/express.js", claim
    assert quote == "var app = function(req, res, next) {"


def test_a_local_is_the_enclosing_functions_own_assignment_without_a_docstring_above_it(
    session: Session,
) -> None:
    hovered = '                parts.extend([b"; ", self.filename.encode()])'
    claim, quote = definition_claim(session, "pkg/multipart.py", hovered, "parts")
    assert claim == "`parts` is defined in pkg/multipart.py", claim
    assert quote.startswith("parts = [") and "self.name.encode()" in quote, quote
    claim, quote = definition_claim(
        session, "pkg/urlparse.py", "        parts.append(match.group(0))", "parts"
    )
    assert claim == "`parts` is defined in pkg/urlparse.py", claim  # no docstring sentence
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
