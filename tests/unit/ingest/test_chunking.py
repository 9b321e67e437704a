"""The tree-sitter chunker: definitions per language, splitting, merging, fallbacks, coverage."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codecite_lsp.core.records import Chunk, content_hash
from codecite_lsp.ingest.chunking import chunk_text
from codecite_lsp.ingest.languages import LANGUAGES, TEXT_LANGUAGE, language_for_path
from codecite_lsp.ingest.symbols import SymbolAtPosition, symbol_at
from codecite_lsp.ingest.syntax import MAX_ERROR_SHARE, Definition, outline

POLYGLOT = Path(__file__).parents[2] / "fixtures" / "polyglot"


def read(name: str) -> str:
    return (POLYGLOT / name).read_text(encoding="utf-8")


def lines_of(text: str) -> list[str]:
    """The file's lines as the chunker defines them: cut after each "\\n"."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def assert_exact_cover(text: str, chunks: list[Chunk], budget: int) -> None:
    """Chunks cover every line once, in order; text and byte offsets match the file."""
    data = text.encode("utf-8")
    lines = lines_of(text)
    expected_line = 1
    for chunk in chunks:
        assert chunk.start_line == expected_line, (chunk.start_line, expected_line)
        assert chunk.end_line >= chunk.start_line
        assert chunk.text == "".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert data[chunk.start_byte : chunk.end_byte].decode("utf-8") == chunk.text
        assert chunk.content_hash == content_hash(chunk.text)
        size = len(chunk.text.replace("\r\n", "\n"))  # the budget counts a CRLF as one
        assert size <= budget or chunk.start_line == chunk.end_line
        expected_line = chunk.end_line + 1
    assert expected_line == len(lines) + 1
    assert "".join(chunk.text for chunk in chunks) == text


# ---------------------------------------------------------------------------------------------
# Languages


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/app.py", "python"),
        ("web/App.JSX", "javascript"),
        ("web/main.ts", "typescript"),
        ("web/Badge.tsx", "tsx"),
        ("cmd/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("A.java", "java"),
        ("ring.h", "c"),
        ("matrix.hpp", "cpp"),
        ("Orders.cs", "csharp"),
        ("Rakefile", "ruby"),
        ("index.php", "php"),
        ("build.gradle.kts", "kotlin"),
        ("App.swift", "swift"),
        ("Main.scala", "scala"),
        ("init.lua", "lua"),
        ("deploy.sh", "bash"),
        ("docs/GUIDE.md", "markdown"),
        ("notes.txt", None),
        ("Makefile", None),
        (".env", None),
        ("dir.py/README", None),
    ],
)
def test_language_for_path(path: str, language: str | None) -> None:
    assert language_for_path(path) == language


# ---------------------------------------------------------------------------------------------
# Definitions in every language, with exact lines (decorators, attributes and the comments
# directly above included) and symbol paths.

EXPECTED: dict[str, list[tuple[str, str, int, int]]] = {
    "inventory.py": [
        ("audited", "function", 11, 18),
        ("audited.wrapper", "function", 14, 16),
        ("Item", "class", 21, 24),
        ("Inventory", "class", 27, 44),
        ("Inventory.reserve", "method", 33, 41),  # comment + decorator + docstring
        ("Inventory.restock", "method", 43, 44),
    ],
    "cart.js": [
        ("cartTotal", "function", 6, 12),  # JSDoc + export
        ("Cart", "class", 14, 32),
        ("Cart.add", "method", 19, 27),
        ("emptyCart", "function", 34, 34),
    ],
    "session.ts": [
        ("Session", "interface", 3, 8),
        ("Role", "enum", 10, 13),
        ("SessionManager", "class", 21, 39),  # doc comment + decorator + export
        ("SessionManager.open", "method", 28, 33),
        ("defaultTtl", "function", 41, 41),
    ],
    "Badge.tsx": [
        ("Badge", "function", 8, 11),
        ("BadgeList", "function", 13, 21),
        ("BadgeCounter.render", "method", 24, 26),
    ],
    "queue.go": [
        ("Job", "struct", 12, 16),
        ("Worker", "interface", 18, 21),
        ("New", "function", 30, 33),
        ("Queue.Push", "method", 35, 44),  # named after its receiver
    ],
    "geometry.rs": [
        ("Point", "struct", 5, 10),  # doc comment + #[derive]
        ("Point", "impl", 12, 21),
        ("Point.distance", "method", 13, 16),
        ("Shape", "enum", 23, 26),
        ("Area", "trait", 28, 30),
        ("Shape.area", "method", 33, 38),  # impl Area for Shape
        ("tests.origin_is_zero", "function", 48, 51),
    ],
    "Ledger.java": [
        ("Ledger", "class", 6, 29),
        ("Ledger.post", "method", 14, 21),  # Javadoc + annotation
        ("Auditor", "interface", 31, 33),
        ("Currency", "enum", 35, 38),
    ],
    "ring.c": [
        ("ring", "struct", 7, 11),
        ("ring_status", "enum", 13, 13),
        ("ring_push", "function", 15, 24),
        ("ring_pop", "function", 26, 34),
    ],
    "matrix.cpp": [
        ("linalg", "namespace", 4, 35),
        ("linalg.Matrix", "class", 6, 23),
        ("linalg.Matrix.at", "method", 11, 16),
        ("linalg.clamp", "function", 25, 28),  # template <...> included
        ("main", "function", 37, 41),
    ],
    "Orders.cs": [
        ("Shop.Orders.Order", "class", 6, 24),
        ("Shop.Orders.Order.AddLine", "method", 12, 21),  # XML doc + [Obsolete]
        ("Shop.Orders.Money", "struct", 33, 37),
    ],
    "mailer.rb": [
        ("Notifications", "module", 4, 32),
        ("Notifications.Mailer", "class", 5, 31),
        ("Notifications.Mailer.deliver", "method", 14, 20),
        ("Notifications.Mailer.default", "method", 22, 24),
    ],
    "Router.php": [
        ("Middleware", "interface", 7, 10),
        ("Router", "class", 12, 33),
        ("Router.add", "method", 19, 27),  # doc comment + #[Deprecated]
        ("redirect", "function", 35, 38),
    ],
    "Thermostat.kt": [
        ("Setpoint", "class", 5, 6),
        ("Thermostat", "class", 14, 31),
        ("Thermostat.decide", "method", 17, 26),
        ("Registry", "object", 33, 35),
        ("fahrenheit", "function", 37, 37),
    ],
    "Playlist.swift": [
        ("Track", "class", 3, 7),
        ("Playable", "protocol", 9, 11),
        ("Playlist", "class", 17, 36),
        ("Playlist.duration", "method", 25, 29),
        ("Playlist.shuffled", "method", 39, 41),
        ("formatDuration", "function", 44, 46),
    ],
    "Scheduler.scala": [
        ("Task", "class", 5, 6),
        ("Clock", "trait", 8, 10),
        ("Scheduler", "object", 12, 16),
        ("Scheduler.schedule", "method", 21, 25),
    ],
    "config.lua": [
        ("M.setup", "function", 9, 16),
        ("trim", "function", 18, 20),
        ("M:describe", "function", 22, 24),
    ],
    "deploy.sh": [
        ("log", "function", 7, 10),
        ("sync_files", "function", 12, 15),
        ("restart", "function", 17, 19),
    ],
    "GUIDE.md": [
        ("Operations", "heading", 1, 21),
        ("Operations > Deployment", "heading", 5, 17),
        ("Operations > Deployment > Rollback", "heading", 14, 17),
        ("Operations > Key rotation", "heading", 18, 21),
        ("Setext title", "heading", 22, 25),
    ],
}


def test_every_required_language_has_its_definitions_expected() -> None:
    # the records, queries and fixtures themselves: tests/unit/ingest/test_languages.py
    languages = {language_for_path(name) for name in EXPECTED}
    assert languages == set(LANGUAGES) == {
        "python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp",
        "csharp", "ruby", "php", "kotlin", "swift", "scala", "lua", "bash", "markdown",
    }  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_definitions_have_exact_lines_and_symbol_paths(name: str) -> None:
    found = outline(name, read(name))
    for symbol, kind, start, end in EXPECTED[name]:
        assert Definition(symbol, kind, start, end) in found, (symbol, found)


@pytest.mark.parametrize("name", sorted(p.name for p in POLYGLOT.iterdir()))
@pytest.mark.parametrize("budget", [1, 60, 250, 1800])
def test_fixture_chunks_cover_the_file_and_keep_fitting_definitions_whole(
    name: str, budget: int
) -> None:
    text = read(name)
    chunks = chunk_text(f"pkg/{name}", text, revision="rev-1", budget=budget)
    assert_exact_cover(text, chunks, budget)
    assert {chunk.revision for chunk in chunks} == {"rev-1"}
    assert {chunk.language for chunk in chunks} == {language_for_path(name) or TEXT_LANGUAGE}
    for definition in outline(name, text):
        size = len("".join(lines_of(text)[definition.start_line - 1 : definition.end_line]))
        if size <= budget:
            assert any(
                c.start_line <= definition.start_line and definition.end_line <= c.end_line
                for c in chunks
            ), definition


def test_a_definition_alone_in_its_chunk_names_it() -> None:
    # At 350 characters Inventory (567) is split and reserve (320) shares its chunk with no
    # other definition, only with the blank line after it.
    chunks = chunk_text("inventory.py", read("inventory.py"), revision="r", budget=350)
    reserve = next(c for c in chunks if c.start_line == 33)
    assert (reserve.end_line, reserve.symbol, reserve.kind) == (42, "Inventory.reserve", "method")
    assert reserve.text.startswith("    # Reservations never go below zero.\n    @audited\n")
    assert reserve.text.endswith("        return True\n\n")


# ---------------------------------------------------------------------------------------------
# Splitting and merging


def method(name: str, body_lines: int) -> str:
    body = "".join(f"        total += {name}_{i} * {i}\n" for i in range(body_lines))
    return f"    def {name}(self, value):\n        total = 0\n{body}        return total\n"


def big_class() -> str:
    return (
        "import os\n\n\n"
        "class AuthService:\n"
        '    """Issues and rotates credentials."""\n\n'
        "    retries = 3\n\n"
        + method("issue", 14)
        + "\n"
        + method("rotate_key", 12)
        + "\n"
        + method("audit", 40)
    )


def test_a_class_over_the_budget_splits_into_its_methods() -> None:
    text = big_class()
    chunks = chunk_text("auth.py", text, revision="r", budget=500)
    assert_exact_cover(text, chunks, 500)
    by_symbol = [(c.symbol, c.kind) for c in chunks]
    assert ("AuthService.issue", "method") in by_symbol
    assert ("AuthService.rotate_key", "method") in by_symbol
    rotate = next(c for c in chunks if c.symbol == "AuthService.rotate_key")
    assert rotate.text.startswith("    def rotate_key(self, value):\n")
    assert rotate.text.rstrip().endswith("return total")
    # The header (class line, docstring, fields) keeps the class's own symbol.
    header = next(c for c in chunks if "class AuthService:" in c.text)
    assert header.symbol == "AuthService"
    assert "retries = 3" in header.text and "def " not in header.text
    # A method over the budget is split between statements and keeps its symbol.
    audit = [c for c in chunks if c.symbol == "AuthService.audit"]
    assert len(audit) >= 2
    assert {c.kind for c in audit} == {"method"}
    assert all(len(c.text) <= 500 for c in audit)


def test_a_rust_impl_over_the_budget_splits_into_functions() -> None:
    text = read("geometry.rs")
    chunks = chunk_text("geometry.rs", text, revision="r", budget=120)
    symbols = {c.symbol for c in chunks}
    assert {"Point.distance", "Point.origin", "Shape.area"} <= symbols


def test_small_neighbours_merge_into_one_block() -> None:
    text = (
        "import os\nimport sys\n\nLIMIT = 10\n\n\n"
        "def one():\n    return 1\n\n\ndef two():\n    return 2\n\n\ndef three():\n    return 3\n"
    )
    [chunk] = chunk_text("small.py", text, revision="r")
    assert (chunk.start_line, chunk.end_line) == (1, 16)
    assert (chunk.symbol, chunk.kind) == (None, "block")


def test_a_merged_chunk_with_one_definition_keeps_its_symbol() -> None:
    text = "import os\n\n\ndef main():\n    return os.getcwd()\n"
    [chunk] = chunk_text("main.py", text, revision="r")
    assert (chunk.symbol, chunk.kind) == ("main", "block")


def test_neighbours_merge_only_up_to_the_budget() -> None:
    text = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(30))
    chunks = chunk_text("many.py", text, revision="r", budget=100)
    assert_exact_cover(text, chunks, 100)
    assert 1 < len(chunks) < 30
    assert any(c.kind == "block" and c.symbol is None for c in chunks)


def test_a_line_longer_than_the_budget_is_one_chunk() -> None:
    long_line = "x = [" + ", ".join(str(i) for i in range(400)) + "]\n"
    text = "import os\n" + long_line + "y = 1\n"
    chunks = chunk_text("data.py", text, revision="r", budget=50)
    assert_exact_cover(text, chunks, 50)
    assert any(c.text == long_line for c in chunks)


# ---------------------------------------------------------------------------------------------
# Broken syntax, markdown, text, empty files, line endings


def test_broken_syntax_still_chunks_and_finds_the_intact_definitions() -> None:
    text = read("inventory.py").replace("    def restock(self", "    def restock(self ((( :")
    chunks = chunk_text("inventory.py", text, revision="r", budget=250)
    assert_exact_cover(text, chunks, 250)
    assert any(c.symbol == "Inventory.reserve" for c in chunks)


def test_a_file_that_is_mostly_errors_falls_back_to_paragraphs() -> None:
    garbage = "\n".join(["}{ ))( ;; ]]", "@@@ ::: ))) {{", "", ")( ][ }{ ;;"] * 20) + "\n"
    chunks = chunk_text("noise.py", garbage, revision="r", budget=200)
    assert_exact_cover(garbage, chunks, 200)
    assert {c.kind for c in chunks} == {"paragraph"}
    assert 0 < MAX_ERROR_SHARE < 1


def test_markdown_is_chunked_by_heading_sections() -> None:
    text = read("GUIDE.md")
    chunks = chunk_text("docs/GUIDE.md", text, revision="r", budget=120)
    assert_exact_cover(text, chunks, 120)
    spans = [(c.symbol, c.start_line, c.end_line) for c in chunks]
    assert ("Operations > Key rotation", 18, 21) in spans
    assert ("Setext title", 22, 25) in spans
    rollback = next(c for c in chunks if c.symbol == "Operations > Deployment > Rollback")
    assert rollback.kind == "heading" and rollback.text.startswith("### Rollback")
    # "# not a heading" inside the code fence starts no section.
    assert not any(c.symbol and "not a heading" in c.symbol for c in chunks)


def test_plain_text_is_chunked_by_paragraphs() -> None:
    text = read("notes.txt")
    chunks = chunk_text("notes.txt", text, revision="r", budget=70)
    assert_exact_cover(text, chunks, 70)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 2), (3, 5), (6, 7)]
    assert {(c.kind, c.symbol, c.language) for c in chunks} == {("paragraph", None, "text")}


def test_an_empty_file_has_no_chunks_and_a_blank_one_has_one() -> None:
    assert chunk_text("empty.py", "", revision="r") == []
    [blank] = chunk_text("blank.py", "\n\n  \n", revision="r")
    assert (blank.start_line, blank.end_line, blank.text) == (1, 3, "\n\n  \n")


def test_crlf_lines_keep_their_endings_and_hash_like_lf() -> None:
    lf = read("queue.go")
    crlf = lf.replace("\n", "\r\n")
    lf_chunks = chunk_text("queue.go", lf, revision="r", budget=200)
    crlf_chunks = chunk_text("queue.go", crlf, revision="r", budget=200)
    assert_exact_cover(crlf, crlf_chunks, 200)
    assert all("\r\n" in c.text for c in crlf_chunks)
    lf_spans = [(c.start_line, c.end_line, c.symbol, c.content_hash) for c in lf_chunks]
    crlf_spans = [(c.start_line, c.end_line, c.symbol, c.content_hash) for c in crlf_chunks]
    assert crlf_spans == lf_spans


def test_the_last_line_without_newline_stays_without() -> None:
    text = "def f():\n    return 'é'"
    [chunk] = chunk_text("f.py", text, revision="r")
    assert chunk.text == text
    assert chunk.end_byte == len(text.encode("utf-8"))


def test_a_bad_budget_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="budget"):
        chunk_text("f.py", "x = 1\n", revision="r", budget=0)


# ---------------------------------------------------------------------------------------------
# Property: any text, any budget


CODE_LINES = [
    "def f(x):", "    return x", "class A:", "    def m(self):", "        pass", "@decorator",
    "# comment", "function g() {", "}", "  // note", "/** doc */", "fn main() {", "impl A {",
    "struct S {", "func (s *S) M() {", "public class B {", "  void run() {}", "end", "local x = 1",
    "## Heading", "# Title", "===", "```", "é ünïcode ✓ 漢字 🙂", "\t\tindented", "((((", "'''",
    '"""', "<?php", "fun k() = 1", "object O {", "  *", "x = [1,", "  2]", "",
]  # fmt: skip
EXTENSIONS = [
    ".py", ".js", ".ts", ".tsx", ".go", ".rs", ".java", ".c", ".cpp", ".cs", ".rb", ".php", ".kt",
    ".swift", ".scala", ".lua", ".sh", ".md", ".txt",
]  # fmt: skip

any_line = st.one_of(
    st.sampled_from(CODE_LINES),
    st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=["Cs"]), max_size=60),
)


@st.composite
def files(draw: st.DrawFn) -> tuple[str, str]:
    lines = draw(st.lists(any_line, max_size=40))
    endings = draw(
        st.lists(st.sampled_from(["\n", "\r\n"]), min_size=len(lines), max_size=len(lines))
    )
    text = "".join(line + end for line, end in zip(lines, endings, strict=True))
    if lines and draw(st.booleans()):
        text = text.removesuffix(endings[-1])  # no newline at the end of the file
    return "file" + draw(st.sampled_from(EXTENSIONS)), text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(file=files(), budget=st.integers(min_value=1, max_value=400))
def test_any_text_and_budget_cover_every_line_exactly_once(
    file: tuple[str, str], budget: int
) -> None:
    path, text = file
    chunks = chunk_text(path, text, revision="r", budget=budget)
    if not text:
        assert chunks == []
    else:
        assert_exact_cover(text, chunks, budget)


# ---------------------------------------------------------------------------------------------
# symbol_at (hover)


def test_symbol_at_a_method_name_is_on_its_definition() -> None:
    text = read("inventory.py")
    line = 34  # "    def reserve(self, sku: str, amount: int) -> bool:" (0-based)
    found = symbol_at("inventory.py", text, line, text.splitlines()[line].index("reserve") + 2)
    assert found == SymbolAtPosition(
        name="reserve",
        enclosing="Inventory.reserve",
        on_definition=True,
        enclosing_kind="method",
        enclosing_lines=(33, 41),
    )


def test_symbol_at_a_use_inside_a_body_names_the_enclosing_definition() -> None:
    text = read("queue.go")
    line = text.splitlines().index("\tq.jobs = append(q.jobs, job)")
    found = symbol_at("queue.go", text, line, 5)  # on "jobs"
    assert found is not None
    assert (found.name, found.enclosing, found.on_definition) == ("jobs", "Queue.Push", False)


def test_symbol_at_outside_definitions_and_on_blank_space() -> None:
    text = "import os\n\nLIMIT = 3\n"
    found = symbol_at("c.py", text, 2, 0)
    assert found == SymbolAtPosition("LIMIT", None, False)
    assert symbol_at("c.py", text, 1, 0) is None
    assert symbol_at("c.py", text, 99, 0) is None


def test_symbol_at_counts_utf16_code_units_by_default() -> None:
    text = 'def greet():\n    s = "🙂"; name = 1\n'
    column = len('    s = "🙂"; '.encode("utf-16-le")) // 2  # the emoji is two UTF-16 units
    found = symbol_at("g.py", text, 1, column)
    assert found is not None and found.name == "name"
    codepoints = symbol_at("g.py", text, 1, len('    s = "🙂"; '), encoding="utf-32")
    assert codepoints is not None and codepoints.name == "name"


def test_symbol_at_in_markdown_names_the_heading_path() -> None:
    text = read("GUIDE.md")
    found = symbol_at("GUIDE.md", text, 19, 0)  # "Keys rotate every 30 days."
    assert found is not None
    assert (found.name, found.enclosing, found.enclosing_lines) == (
        "Keys",
        "Operations > Key rotation",
        (18, 21),
    )


def test_text_that_is_not_valid_unicode_is_a_clear_error_not_a_crash() -> None:
    broken = "def f():\n    return '\udcff'\n"  # a lone surrogate from a lenient decode
    with pytest.raises(ValueError, match="not valid Unicode"):
        chunk_text("f.py", broken, revision="r")
    assert symbol_at("f.py", broken, 0, 4) is None
