"""The offline answerer knows what a piece of code defines from the chunker's tree-sitter
queries, in every language, and answers "how does X do Y" with the statements that do it."""

from __future__ import annotations

import json
from typing import Any

from codecite_lsp.core.records import Source, outside_source
from codecite_lsp.offline.extractive import answer
from codecite_lsp.offline.hover import hover_answer
from codecite_lsp.offline.source_runs import read_runs
from codecite_lsp.verify.gate import GatePassed, verify


def source(path: str, text: str, start: int = 1, symbol: str | None = None) -> Source:
    count = len(text.split("\n"))
    return outside_source("S1", path, start, start + count - 1, text, symbol)


def claims(raw: str, sources: list[Source]) -> list[dict[str, Any]]:
    assert isinstance(verify(raw, sources), GatePassed)  # every quote is still verbatim
    return [span for span in json.loads(raw)["spans"] if span["kind"] == "claim"]


def definition_lines(path: str, text: str) -> list[str]:
    run = read_runs([source(path, text)])[0]
    return [line.strip() for line, is_def in zip(run.lines, run.is_def, strict=True) if is_def]


def test_python_definitions_are_signatures_not_docstring_words() -> None:
    python = (
        "@dataclass(frozen=True)\n"
        "class Key:\n"
        '    """A signing key.\n'
        "\n"
        "    type of the key and its\n"
        "    class name are stored with it.\n"
        '    """\n'
        "\n"
        "    def rotate(\n"
        "        self, seed: int\n"
        "    ) -> Key:\n"
        "        return Key()\n"
    )
    assert definition_lines("keys.py", python) == [
        "@dataclass(frozen=True)",
        "class Key:",
        "def rotate(",
        "self, seed: int",
        ") -> Key:",
    ]


def test_go_definitions_and_not_calls_taking_a_closure() -> None:
    go = (
        "package keys\n"
        "\n"
        "type Store struct {\n"
        "\tkey string\n"
        "}\n"
        "\n"
        "func (s *Store) Rotate(key string) error {\n"
        "\tretry(func() error {\n"
        "\t\treturn s.swap(key)\n"
        "\t})\n"
        "\treturn nil\n"
        "}\n"
    )
    assert definition_lines("store.go", go) == [
        "type Store struct {",
        "func (s *Store) Rotate(key string) error {",
    ]


def test_typescript_arrow_functions_and_a_method_cut_from_its_class() -> None:
    typescript = (
        "export const rotateKey = async (key: string): Promise<void> => {\n"
        "  await store.swap(key);\n"
        "};\n"
    )
    assert definition_lines("keys.ts", typescript) == [
        "export const rotateKey = async (key: string): Promise<void> => {"
    ]
    # A chunk holding one method of a large class: not a statement at the top level.
    method = (
        "  /** Rotates the key. */\n"
        "  async rotate(key: string): Promise<void> {\n"
        '    it("is not a definition", function () {\n'
        "      this.key = key;\n"
        "    });\n"
        "  }\n"
    )
    assert definition_lines("store.ts", method) == ["async rotate(key: string): Promise<void> {"]


def test_a_typescript_body_fragment_defines_nothing() -> None:
    fragment = "    if (ready) {\n      flush();\n    }\n    return queue;\n  }\n"
    assert definition_lines("queue.ts", fragment) == []


def test_a_claim_names_the_go_method_the_lines_are_in() -> None:
    go = (
        "func (s *Store) Rotate(key string) error {\n"
        "\ts.mu.Lock()\n"
        "\tdefer s.mu.Unlock()\n"
        "\tretry(func() error {\n"
        "\t\treturn s.swapKey(key)\n"
        "\t})\n"
        "\treturn nil\n"
        "}\n"
    )
    sources = [source("store.go", go, start=10, symbol="Store.Rotate")]
    found = claims(answer("Where does Rotate retry the key swap?", sources), sources)
    # `retry(func() error {` calls retry: the claim is about the method it sits in.
    # Its body's statements are quotable on their own (a block's braces are not a call's).
    assert [claim["text"] for claim in found] == ["In `Store.Rotate` (store.go), lines 13-15:"]
    assert "\tretry(func() error {\n" in found[0]["citations"][0]["quote"]


def test_hover_on_a_typescript_arrow_function_quotes_its_signature() -> None:
    typescript = (
        "/** Replaces the signing key. */\n"
        "export const rotateKey = async (\n"
        "  key: string,\n"
        "): Promise<void> => {\n"
        "  await store.swap(key);\n"
        "};\n"
    )
    definition = source("keys.ts", typescript, symbol="rotateKey")
    found = claims(hover_answer("rotateKey", definition, []), [definition])
    quote = found[0]["citations"][0]["quote"]
    assert found[0]["text"] == "`rotateKey` is defined in keys.ts: Replaces the signing key."
    assert quote.startswith("/** Replaces the signing key. */\nexport const rotateKey = async (")
    assert quote.endswith("): Promise<void> => {")


GATE = '''"""The citation gate: every quote is checked against its source before it is shown."""

from dataclasses import dataclass


@dataclass
class QuoteCheck:
    """The verdict on one quote, checked against one source."""

    quote: str
    source: str
    verified: bool


def check_quote(quote: str, source: str) -> QuoteCheck:
    """Check that a quote occurs in its source."""
    needle = " ".join(quote.split())
    haystack = " ".join(source.split())
    return QuoteCheck(quote, source, needle in haystack)
'''


def test_how_is_answered_by_the_body_that_does_it_not_the_docstrings() -> None:
    sources = [source("gate.py", GATE)]
    found = claims(answer("How does the gate check a quote?", sources), sources)
    first = found[0]["citations"][0]
    assert found[0]["text"].startswith("In `check_quote` (gate.py)")
    assert first["quote"].strip().startswith(("needle = ", "return QuoteCheck("))


def test_what_is_still_answered_by_the_definition() -> None:
    sources = [source("gate.py", GATE)]
    found = claims(answer("What is a QuoteCheck?", sources), sources)
    assert found[0]["text"].startswith("`QuoteCheck` in gate.py")


ACQUIRE = (
    "def acquire(self, timeout):\n"
    '    """Take the lock."""\n'
    "    self._waiters += 1\n"
    "\n"
    "    if timeout is not None and timeout <= 0:\n"
    "        raise LockTimeout(self.name)\n"
    "    self._held = True\n"
)


def test_a_quoted_block_header_comes_with_its_first_statement() -> None:
    sources = [source("lock.py", ACQUIRE, symbol="acquire")]
    found = claims(answer("When is the timeout checked in acquire?", sources), sources)
    quotes = [claim["citations"][0]["quote"] for claim in found]
    # `if ...:` alone says what is tested, not what then happens.
    assert (
        "    if timeout is not None and timeout <= 0:\n        raise LockTimeout(self.name)"
        in quotes
    )
    assert "    if timeout is not None and timeout <= 0:" not in quotes


def test_how_puts_the_checking_statements_before_the_signature() -> None:
    sources = [source("lock.py", ACQUIRE, symbol="acquire")]
    found = claims(answer("How is the timeout of acquire checked?", sources), sources)
    assert found[0]["text"] == "In `acquire` (lock.py), lines 5-6:"
    # The signature, if quoted at all, comes after the statements doing the check.
    later = [claim["citations"][0]["quote"] for claim in found[1:]]
    assert all(not quote.startswith("    if timeout") for quote in later)


def test_two_matching_statements_one_line_apart_are_one_quote() -> None:
    code = (
        "def check(cite):\n"
        "    needle = normalise_ws(cite.quote)\n"
        "    if not needle:\n"
        '        return result("empty_quote", "the quote is empty")\n'
    )
    sources = [source("gate.py", code, start=236, symbol="check")]
    found = claims(answer("How does check handle a quote?", sources), sources)
    assert [(c["start_line"], c["end_line"]) for c in found[0]["citations"]] == [(237, 239)]


EXPRESS_STYLE = (
    "var res = Object.create(http.ServerResponse.prototype)\n"
    "\n"
    "/**\n"
    " * Send a response.\n"
    " */\n"
    "res.send = function send(body) {\n"
    "  var chunk = body;\n"
    "  switch (typeof chunk) {\n"
    "    case 'string':\n"
    "      if (!this.get('Content-Type')) {\n"
    "        this.type('html');\n"
    "      }\n"
    "      break;\n"
    "  }\n"
    "  return this.end(chunk);\n"
    "};\n"
    "\n"
    "Router.prototype.use = (fn) => {\n"
    "  this.stack.push(fn);\n"
    "};\n"
)


def test_a_function_assigned_to_a_property_is_a_definition() -> None:
    """Express and most Node code before classes define methods as `res.send = function send`:
    without them a file had no definitions, so no body's statements could answer "how", and
    its chunks had no symbol."""
    from codecite_lsp.ingest.chunking import chunk_text

    for path in ("response.js", "response.ts"):
        assert definition_lines(path, EXPRESS_STYLE) == [
            "res.send = function send(body) {",
            "Router.prototype.use = (fn) => {",
        ]
    symbols = {c.symbol for c in chunk_text("response.js", EXPRESS_STYLE, revision="r", budget=200)}
    assert {"res.send", "Router.prototype.use"} <= symbols
    source = outside_source("S1", "lib/response.js", 1, 20, EXPRESS_STYLE)
    raw = answer("How does res.send set the Content-Type?", [source])
    first = claims(raw, [source])[0]
    assert first["text"].startswith("In `send` (lib/response.js)")  # the function it is in
    assert isinstance(verify(raw, [source]), GatePassed)
