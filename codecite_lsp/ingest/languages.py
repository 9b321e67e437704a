"""Which tree-sitter grammar reads a file, and the cached parsers and queries for each grammar.

Grammar names are those of ``tree-sitter-language-pack`` 0.13 (grammars ship inside its wheel).
Everything not listed here is plain text, chunked by blank-line paragraphs.
"""

from __future__ import annotations

import functools
import re
import threading
from importlib import resources
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Parser, Query

TEXT_LANGUAGE = "text"

# File extension -> grammar name (see language_for_path, which also reads _BY_FILENAME).
BY_EXTENSION: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".jsx": "javascript",  # the javascript grammar parses JSX
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".ipp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".php": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".sc": "scala",
    ".lua": "lua",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
}

# Files recognised by their whole name (no telling extension).
_BY_FILENAME: dict[str, str] = {
    "rakefile": "ruby",
    "gemfile": "ruby",
    ".bashrc": "bash",
    ".bash_profile": "bash",
    ".profile": "bash",
    ".zshrc": "bash",
}

# Every language with a query file in codecite_lsp/ingest/queries/<name>.scm.
LANGUAGES: frozenset[str] = frozenset(BY_EXTENSION.values())


def language_for_path(path: str) -> str | None:
    """The grammar name for ``path`` (by extension, then file name); None means plain text."""
    name = PurePosixPath(path.replace("\\", "/")).name.lower()
    language = _BY_FILENAME.get(name)
    if language is not None:
        return language
    dot = name.rfind(".")
    return BY_EXTENSION.get(name[dot:]) if dot > 0 else None


_PARSERS = threading.local()


def is_code(path: str) -> bool:
    """Whether ``path`` is source code (docs, Markdown and plain text are not)."""
    return language_for_path(path) not in (None, "markdown")


def parser_for(language: str) -> Parser:
    """One parser per grammar and thread: building one costs more than parsing a small file, and
    a parser must not be used by two threads at once."""
    cache: dict[str, Parser] = _PARSERS.__dict__.setdefault("by_language", {})
    parser = cache.get(language)
    if parser is None:
        from tree_sitter_language_pack import get_parser

        parser = cache[language] = get_parser(language)  # type: ignore[arg-type]
    return parser


_INHERITS = re.compile(r"^;\s*inherits:\s*([a-z_]+)\s*$", re.MULTILINE)


def query_source(language: str) -> str:
    """The definition/name/comment patterns for ``language`` (a file of data, not code).

    A line ``; inherits: other`` pulls in ``other.scm`` first (as nvim-treesitter does), so a
    superset grammar such as TSX does not repeat TypeScript's patterns.
    """
    text = resources.files(__package__).joinpath(f"queries/{language}.scm").read_text("utf-8")
    inherited = [query_source(parent) for parent in _INHERITS.findall(text)]
    return "\n".join([*inherited, text])


@functools.cache
def query_for(language: str) -> Query:
    """The language's .scm patterns plus an ``@error`` capture used to measure broken syntax."""
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language

    grammar = get_language(language)  # type: ignore[arg-type]
    return Query(grammar, query_source(language) + "\n(ERROR) @error\n")
