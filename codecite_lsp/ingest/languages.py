"""The language table: one ``Language`` record per tree-sitter grammar, everything any stage
knows about that language, and the cached parsers and queries for each grammar.

Grammar names are those of ``tree-sitter-language-pack`` 0.13 (grammars ship inside its wheel).
Everything not listed here is plain text, chunked by blank-line paragraphs. A language's facts
live in its record only (CONTRIBUTING.md, "Adding a language"); the readers are the chunker and
``syntax.py`` (grammar, query), ``reserved.py``, ``guard.py`` (nesting), ``retrieve/fields.py``
(lexicon), ``offline/definitions.py`` (fragment contexts) and ``verify/support.py``
(definition words).
"""

from __future__ import annotations

import builtins
import functools
import keyword
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from tree_sitter import Language as Grammar
    from tree_sitter import Parser, Query

TEXT_LANGUAGE = "text"


@dataclass(frozen=True, slots=True)
class Lexicon:
    """How comments and one-line strings are written, as far as a lexer tells them from code
    (``retrieve/fields.py``; block comments and triple-quoted docstrings it reads everywhere)."""

    line_comment: str = "//"
    quotes: str = '"'  # characters that open a string: '"' and "'" one line, "`" any lines


PLAIN = Lexicon()  # plain text and Markdown: a URL's "//" starts prose, as a comment would
_HASH_COMMENTS = Lexicon("#")


@dataclass(frozen=True, slots=True)
class Nesting:
    """A nesting depth past which the grammar crashes the process (``guard.py`` measures it
    before parsing): Markdown's open blocks, or Kotlin's ``"${`` string templates."""

    kind: Literal["blocks", "templates"]
    most: int


@dataclass(frozen=True, slots=True)
class Language:
    """One grammar and the facts every stage reads about its language."""

    name: str  # the grammar's name in tree-sitter-language-pack, and the chunks' language
    extensions: tuple[str, ...]  # lower case, with the dot; the first names a generated file
    query: str  # the file in codecite_lsp/ingest/queries/: definitions, names, comments
    lexicon: Lexicon
    reserved: frozenset[str]  # names the language gives every file: no hover, no uses
    definition_words: tuple[str, ...] = ()  # keywords that open a definition: `def`, `fn`
    modifiers: tuple[str, ...] = ()  # words that may come before them: `export`, `pub`
    filenames: tuple[str, ...] = ()  # whole names, lower case, of files with no telling extension
    contexts: tuple[tuple[str, str], ...] = ()  # (prefix, suffix) a retrieved fragment may need
    opening_tag: str = ""  # what the grammar needs before any code (PHP's `<?php`)
    nesting: Nesting | None = None
    prose: bool = False  # documentation, not source code

    def grammar(self) -> Grammar:
        """The tree-sitter grammar (loaded from the language pack's wheel)."""
        from tree_sitter_language_pack import get_language

        return get_language(self.name)  # type: ignore[arg-type]


def _words(*texts: str) -> frozenset[str]:
    return frozenset(" ".join(texts).split())


_C_FAMILY = "if else for while do switch case default break continue return goto sizeof"
_JS = (
    "this super new delete typeof instanceof void in of var let const function class extends "
    "return if else for while do switch case default break continue throw try catch finally "
    "async await yield import export from null undefined true false console window document "
    "globalThis Object Array String Number Boolean Promise JSON Math Error Map Set Symbol "
    "require module exports"
)
_TS = _JS + " interface type enum implements keyof readonly any unknown never"
_CLASS_BODY = ("class Cut {\n", "\n}")  # a method cut from a large class is no statement
_TS_WORDS = ("function", "class", "interface", "type")
_TS_MODIFIERS = ("export", "async", "static", "public", "private")

_TABLE = (
    Language(
        "python",
        (".py", ".pyi", ".pyw"),
        "python.scm",
        Lexicon("#", "\"'"),
        frozenset([*keyword.kwlist, *keyword.softkwlist, *dir(builtins), "self", "cls"]),
        ("def", "class"),
        ("async",),
        contexts=(('"""\n', ""),),  # a run beginning inside a docstring
    ),
    Language(
        "javascript",
        (".js", ".jsx", ".mjs", ".cjs"),  # the javascript grammar parses JSX
        "javascript.scm",
        Lexicon("//", "\"'`"),
        _words(_JS),
        ("function", "class"),
        ("export", "async", "static"),
        contexts=(_CLASS_BODY,),
    ),
    Language(
        "typescript",
        (".ts", ".mts", ".cts"),
        "typescript.scm",
        Lexicon("//", "\"'`"),
        _words(_TS),
        _TS_WORDS,
        _TS_MODIFIERS,
        contexts=(_CLASS_BODY,),
    ),
    Language(
        "tsx",
        (".tsx",),
        "tsx.scm",
        Lexicon("//", "\"'`"),
        _words(_TS),
        _TS_WORDS,
        _TS_MODIFIERS,
        contexts=(_CLASS_BODY,),
    ),
    Language(
        "go",
        (".go",),
        "go.scm",
        Lexicon("//", '"`'),
        _words(
            "func var const type struct interface map chan go defer select package import range "
            "return if else for switch case default break continue fallthrough goto nil true "
            "false iota append cap close complex copy delete imag len make new panic print "
            "println real recover error string int int8 int16 int32 int64 uint uint8 uint16 "
            "uint32 uint64 uintptr byte rune bool float32 float64 any"
        ),
        ("func", "type", "struct", "interface"),
    ),
    Language(
        "rust",
        (".rs",),
        "rust.scm",
        Lexicon("//"),
        _words(
            "self Self super crate fn let mut const static struct enum trait impl mod use pub "
            "match if else loop while for in return break continue move ref where as dyn async "
            "await unsafe true false Some None Ok Err Option Result Vec String Box println "
            "format vec panic assert assert_eq"
        ),
        ("fn", "struct", "impl", "type"),
        ("pub", "async"),
    ),
    Language(
        "java",
        (".java",),
        "java.scm",
        Lexicon("//"),
        _words(
            _C_FAMILY,
            "this super new class interface enum extends implements public private "
            "protected static final abstract void null true false throw throws try catch "
            "finally import package instanceof String Object System Integer List Map",
        ),
        ("class", "interface"),
        ("public", "private", "static"),
    ),
    Language(
        "c",
        (".c", ".h"),
        "c.scm",
        Lexicon("//"),
        _words(_C_FAMILY, "struct union enum typedef static const void NULL"),
        ("struct",),
        ("static",),
    ),
    Language(
        "cpp",
        (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".ipp"),
        "cpp.scm",
        Lexicon("//"),
        _words(_C_FAMILY, "this new delete class struct namespace template nullptr std"),
        ("class", "struct"),
        ("static",),
    ),
    Language(
        "csharp",
        (".cs",),
        "csharp.scm",
        Lexicon("//"),
        _words(
            _C_FAMILY,
            "this base new class interface struct enum public private protected internal "
            "static readonly void null true false var throw try catch finally using "
            "namespace string object int bool Console",
        ),
        ("class", "struct", "interface"),
        ("public", "private", "static", "async"),
        contexts=(_CLASS_BODY,),
    ),
    Language(
        "ruby",
        (".rb", ".rake", ".gemspec"),
        "ruby.scm",
        Lexicon("#", "\"'"),
        _words(
            "self def end class module if else elsif unless while do return nil true false puts "
            "require"
        ),
        ("def", "class"),
        ("private",),
        filenames=("rakefile", "gemfile"),
    ),
    Language(
        "php",
        (".php",),
        "php.scm",
        Lexicon("#", "\"'"),
        _words("this self parent function class new echo return null true false"),
        ("function", "class", "interface"),
        ("public", "private", "static"),
        contexts=(("<?php class Cut {\n", "\n}"),),
        opening_tag="<?php\n",  # without one, PHP is all inline HTML
    ),
    Language(
        "kotlin",
        (".kt", ".kts"),
        "kotlin.scm",
        Lexicon("//", '"`'),
        _words("this super fun val var class object return null true false"),
        ("fun", "class", "interface"),
        ("public", "private"),
        nesting=Nesting("templates", 500),  # the grammar aborts at 1025 nested templates
    ),
    Language(
        "swift",
        (".swift",),
        "swift.scm",
        Lexicon("//"),
        _words("self Self super func var let class struct return nil true false"),
        ("func", "class", "struct"),
        ("public", "private", "static"),
    ),
    Language(
        "scala",
        (".scala", ".sc"),
        "scala.scm",
        Lexicon("//"),
        _words("this super def val var class object return null true false"),
        ("def", "class"),
        ("private",),
    ),
    Language(
        "lua",
        (".lua",),
        "lua.scm",
        Lexicon("--", "\"'"),
        _words("self local function end return nil true false require print"),
        ("function",),
    ),
    Language(
        "bash",
        (".sh", ".bash", ".zsh"),
        "bash.scm",
        Lexicon("#", "\"'`"),
        frozenset(),
        ("function",),
        filenames=(".bashrc", ".bash_profile", ".profile", ".zshrc"),
    ),
    Language(
        "markdown",
        (".md", ".markdown", ".mdx"),
        "markdown.scm",
        PLAIN,
        frozenset(),
        # The grammar crashes at 255 open blocks; this leaves room for guard.py over-counting.
        nesting=Nesting("blocks", 100),
        prose=True,
    ),
)

LANGUAGES: Mapping[str, Language] = {language.name: language for language in _TABLE}
_BY_EXTENSION = {ext: language.name for language in _TABLE for ext in language.extensions}
_BY_FILENAME = {name: language.name for language in _TABLE for name in language.filenames}
# Formats read as plain text (no grammar here) whose comments are still no code to a lexer.
_TEXT_LEXICONS = {".toml": _HASH_COMMENTS, ".yaml": _HASH_COMMENTS, ".yml": _HASH_COMMENTS}


def _name_and_extension(path: str) -> tuple[str, str]:
    name = PurePosixPath(path.replace("\\", "/")).name.lower()
    dot = name.rfind(".")
    return name, name[dot:] if dot > 0 else ""


def language_for_path(path: str) -> str | None:
    """The grammar name for ``path`` (by file name, then extension); None means plain text."""
    name, extension = _name_and_extension(path)
    return _BY_FILENAME.get(name) or _BY_EXTENSION.get(extension)


def lexicon_for_path(path: str) -> Lexicon:
    """How comments and strings are written in the file at ``path`` (parsed by a grammar or not:
    TOML's and YAML's ``#`` comments are comments)."""
    language = language_for_path(path)
    if language is not None:
        return LANGUAGES[language].lexicon
    return _TEXT_LEXICONS.get(_name_and_extension(path)[1], PLAIN)


_PARSERS = threading.local()


def is_code(path: str) -> bool:
    """Whether ``path`` is source code (docs, Markdown and plain text are not)."""
    language = language_for_path(path)
    return language is not None and not LANGUAGES[language].prose


def parser_for(language: str) -> Parser:
    """One parser per grammar and thread: building one costs more than parsing a small file, and
    a parser must not be used by two threads at once."""
    cache: dict[str, Parser] = _PARSERS.__dict__.setdefault("by_language", {})
    parser = cache.get(language)
    if parser is None:
        from tree_sitter import Parser

        parser = cache[language] = Parser(LANGUAGES[language].grammar())
    return parser


_INHERITS = re.compile(r"^;\s*inherits:\s*([a-z_]+)\s*$", re.MULTILINE)


def query_source(language: str) -> str:
    """The definition/name/comment patterns for ``language`` (a file of data, not code).

    A line ``; inherits: other`` pulls in ``other``'s query first (as nvim-treesitter does), so
    a superset grammar such as TSX does not repeat TypeScript's patterns.
    """
    query = LANGUAGES[language].query
    text = resources.files(__package__).joinpath(f"queries/{query}").read_text("utf-8")
    inherited = [query_source(parent) for parent in _INHERITS.findall(text)]
    return "\n".join([*inherited, text])


@functools.cache
def query_for(language: str) -> Query:
    """The language's .scm patterns plus an ``@error`` capture used to measure broken syntax."""
    from tree_sitter import Query

    return Query(LANGUAGES[language].grammar(), query_source(language) + "\n(ERROR) @error\n")
