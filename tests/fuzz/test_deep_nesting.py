"""Generated nesting up to 10,000 levels, every language the chunker parses (issue 10): input
built to crash or hang a parser costs at most that file. Its own tier (``fuzz``): bounded in time
for CI (every generated file stays under max_file_bytes; the parse deadline bounds the slowest
grammar), but half a minute of parsing, kept out of the unit tier."""

from __future__ import annotations

import os

from chunker_child import run_chunker
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codecite_lsp.core.config import Config
from codecite_lsp.ingest.chunking import chunk_text
from codecite_lsp.ingest.languages import LANGUAGES
from codecite_lsp.ingest.symbols import symbol_at
from codecite_lsp.ingest.syntax import outline

# --- shapes of nesting -------------------------------------------------------

_SHAPES: list[tuple[str, str, str]] = [  # opener, middle, closer
    ("(", "x", ")"),
    ("[", "x", "]"),
    ("{", "x", "}"),
    ('"${', "x", '}"'),  # string templates: tree-sitter-kotlin aborted at 1025 levels
    ("<a>", "x", "</a>"),
    ("> ", "x", ""),
    ("- ", "x", ""),
    ("1. ", "x", ""),
    ("/*", "x", "*/"),
    ('"', "x", '"'),
    ("${", "x", "}"),
    ("$(", "x", ")"),
    ("f(", "x", ")"),
    ("-", "1", ""),
    ("do ", "x", " end"),
    ("if x then ", "y", " end"),
    ("begin ", "x", " end"),
    ("#", " x", ""),
]
_MAX_BYTES = Config().max_file_bytes


def _nested(shape: tuple[str, str, str], depth: int, closed: bool, per_line: bool) -> str:
    opener, middle, closer = shape
    if per_line:  # one level per line, indented: the shape of nested blocks and lists
        width = max(1, min(depth, 1200))  # indentation grows quadratically: stay under 1 MB
        opened = "".join(" " * i + opener + "\n" for i in range(width))
        return (
            opened
            + middle
            + "\n"
            + ("".join(closer + "\n" for _ in range(width)) if closed else "")
        )
    return opener * depth + middle + (closer * depth if closed else "") + "\n"


@settings(
    max_examples=int(os.environ.get("CODECITE_FUZZ_EXAMPLES", "40")),
    deadline=None,  # the parse deadline bounds each example; the suite's time is measured
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    language=st.sampled_from(sorted(LANGUAGES)),
    shape=st.sampled_from(_SHAPES),
    depth=st.one_of(st.integers(1, 400), st.integers(400, 10_000)),
    closed=st.booleans(),
    per_line=st.booleans(),
)
def test_deep_nesting_never_crashes_or_hangs_the_chunker(
    language: str, shape: tuple[str, str, str], depth: int, closed: bool, per_line: bool
) -> None:
    text = _nested(shape, depth, closed, per_line)
    if len(text.encode()) > _MAX_BYTES:
        return  # never read: the indexer skips the file as too large
    path = f"deep{LANGUAGES[language].extensions[0]}"
    chunks = chunk_text(path, text, revision="r")
    outline(path, text)
    symbol_at(path, text, 0, 0)
    assert "".join(c.text for c in chunks) == text


def test_ten_thousand_levels_of_every_shape_and_language_in_a_child_process() -> None:
    """The deepest inputs, in a child process so that a crash is reported, not fatal."""
    files = [
        (f"deep{LANGUAGES[language].extensions[0]}", _nested(shape, 10_000, True, False))
        for language in sorted(LANGUAGES)
        for shape in _SHAPES[:5]  # brackets, templates, tags; Hypothesis draws the other shapes
    ]
    done = run_chunker(files)
    assert done.returncode == 0, (done.stdout[-300:], done.stderr[-500:])
    assert done.stdout.split()[1::2] == ["True"] * len(files)
