"""What a chunk defines and uses, from the tree-sitter queries; the signature lines of a
definition (real grammars)."""

from __future__ import annotations

from codecite_lsp.ingest.chunking import chunk_text
from codecite_lsp.ingest.syntax import Header, headers


def test_a_chunk_records_the_names_it_defines_and_the_names_it_calls() -> None:
    source = (
        "class Store:\n    def rotate(self):\n        self.retire(make_key())\n\n\n"
        "def helper():\n    return Store().rotate()\n"
    )
    chunks = chunk_text("store.py", source, revision="r", budget=72)
    by_start = {c.start_line: c for c in chunks}
    assert by_start[1].defines == ("Store", "rotate")
    assert set(by_start[1].uses) == {"retire", "make_key"}
    helper = next(c for c in chunks if "helper" in c.defines)
    assert set(helper.uses) == {"Store", "rotate"}  # used here, defined elsewhere


def test_names_come_from_each_languages_queries() -> None:
    go = chunk_text(
        "render.go",
        "package render\n\nfunc (d Data) Render(w Writer) error {\n\treturn writeBytes(w)\n}\n",
        revision="r",
    )
    assert go[0].defines == ("Render",) and go[0].uses == ("writeBytes",)
    ts = chunk_text(
        "merge.ts",
        "export const deepMerge = (a: A) => {\n  return new Headers(mergeHeaders(a));\n};\n",
        revision="r",
    )
    assert ts[0].defines == ("deepMerge",) and set(ts[0].uses) == {"Headers", "mergeHeaders"}


def test_prose_defines_nothing() -> None:
    chunk = chunk_text("README.md", "# Retry\n\nCall `retry()` to retry.\n", revision="r")[0]
    assert chunk.defines == () and chunk.uses == ()


def test_a_signature_ends_where_the_body_begins() -> None:
    python = "@cached\ndef consume_value(\n    self, ctx\n):\n    return ctx\n"
    assert headers("core.py", python) == [Header("consume_value", 1, 4, "function", 5)]
    go = "package a\n\nfunc Render(\n\tw int,\n) error {\n\treturn nil\n}\n"
    # `) error {` is signature
    assert headers("a.go", go) == [Header("Render", 3, 5, "function", 7)]
    cut_short = "class Loader:\n    def load(self, name):\n        if name:\n"
    assert headers("l.py", cut_short) == [
        Header("Loader", 1, 1, "class", 3),
        Header("load", 2, 2, "method", 3),
    ]
