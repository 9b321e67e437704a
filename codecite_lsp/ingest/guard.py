"""Parsing that a hostile file cannot turn into a crash or a hang (pure: no I/O).

Two ways a file took the process down in tree-sitter, each found by generated input:

* tree-sitter-markdown keeps its open blocks (block quotes, list items) in a fixed-size state
  buffer and writes past it at 255 open blocks: ``'>' * 260`` on one line, or a list nested 255
  deep, is a SIGSEGV in the indexer, its workers, or the server hovering an unsaved buffer. The
  depth is measured here before parsing and a file nested deeper than the language's ``nesting``
  (in the language table) is not parsed (the chunker cuts it into paragraphs, so it is still
  indexed).
* tree-sitter-kotlin keeps the strings open around nested ``"${`` templates in the same kind of
  buffer and aborts (SIGABRT) past 1024 levels; the brace depth bounds that nesting.
* Error recovery in some grammars is superlinear on garbage (Lua on a 1 MB file of indented
  ``if x:`` lines: tens of seconds). The parser reads its input through a callback here, which
  ends the input once ``PARSE_SECONDS`` have passed; a parse cut short is thrown away.

A crash no guard foresaw costs one file, not the pass nor the server: every parse of repository
or buffer text runs in a worker process (workers.py), and a worker that dies is replaced and its
files retried one by one. ``CODECITE_UNGUARDED_PARSE=1`` turns the checks below off, a testing
aid that lets the tests crash a worker for real with the Markdown file above.
"""

from __future__ import annotations

import os
import re
import time
from typing import TYPE_CHECKING

from .languages import LANGUAGES, parser_for

if TYPE_CHECKING:
    from tree_sitter import Tree

# A 1 MB file (max_file_bytes) of ordinary code parses in a fifth of a second here.
PARSE_SECONDS = 5.0
_READ_BYTES = 65536  # per callback: the deadline is checked this often while lexing
UNGUARDED_ENV = "CODECITE_UNGUARDED_PARSE"

# The container prefix of a Markdown line: quote markers, list markers and their indentation.
_MD_PREFIX = re.compile(rb"^[ \t>*+\-0-9.)]+", re.MULTILINE)
_BRACES = re.compile(rb"[{}]")
_MD_MARKER = re.compile(rb">|[-+*](?=[ \t]|$)|[0-9]{1,9}[.)](?=[ \t]|$)")


def markdown_depth(source: bytes) -> int:
    """An upper bound on the blocks open at any line: every open block is matched on each line
    it continues by a ``>``, a list marker, or at least two columns of indentation."""
    deepest = 0
    for match in _MD_PREFIX.finditer(source):
        prefix = match.group()
        if len(prefix) <= deepest:
            continue  # each level costs at least one character of prefix
        columns = prefix.count(b" ") + 4 * prefix.count(b"\t")
        deepest = max(deepest, len(_MD_MARKER.findall(prefix)) + columns // 2)
    return deepest


def brace_depth(source: bytes) -> int:
    """The deepest nesting of ``{`` (a template's ``${`` included): a bound on templates."""
    depth = deepest = 0
    for brace in _BRACES.findall(source):
        if brace == b"{":
            depth += 1
            deepest = max(deepest, depth)
        elif depth:
            depth -= 1
    return deepest


def unsafe_to_parse(language: str, source: bytes) -> str | None:
    """Why ``source`` must not be given to ``language``'s parser, or None when it is safe."""
    if os.environ.get(UNGUARDED_ENV) == "1":
        return None
    limit = LANGUAGES[language].nesting
    if limit is None:
        return None
    if limit.kind == "blocks":
        depth = markdown_depth(source)
        if depth > limit.most:
            return f"nested {depth} blocks deep (more than {limit.most})"
    # count() first: a file with few templates cannot nest them deeply (and costs nothing)
    elif source.count(b"${") > limit.most:
        depth = brace_depth(source)
        if depth > limit.most:
            return f"string templates nested {depth} deep (more than {limit.most})"
    return None


def parse_guarded(language: str, source: bytes, seconds: float = PARSE_SECONDS) -> Tree | None:
    """The syntax tree of ``source`` (UTF-8), or None when parsing it is unsafe or did not
    finish within ``seconds`` (the caller then treats the file as plain text)."""
    if unsafe_to_parse(language, source) is not None:
        return None
    deadline = time.monotonic() + seconds
    cut = False

    def read(offset: int, _point: object) -> bytes:
        nonlocal cut
        if offset < len(source) and time.monotonic() > deadline:
            cut = True
            return b""  # the end of the input as far as the parser knows
        return source[offset : offset + _READ_BYTES]

    tree = parser_for(language).parse(read)
    return None if cut else tree
