"""What tree-sitter says about a file, for every step that asks (pure: no I/O).

One parse through the guard (``guard.parse_guarded``) and one query per language
(``queries/<language>.scm``) give the definitions (nested, with their heads, decorators and
leading comments), the references, and Markdown's sections. The chunker plans chunks from them;
``outline`` and ``headers`` list definitions and their signature lines; ``Names`` is the one answer
to "what does this chunk define, and which names does it use".
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .guard import parse_guarded
from .languages import language_for_path, query_for
from .lines import Lines

if TYPE_CHECKING:
    from tree_sitter import Node

# Above this share of the non-blank bytes loose in ERROR nodes, the tree is not worth following.

MAX_ERROR_SHARE = 0.5

# Nodes that wrap a definition and belong to its chunk (decorators, `export`, `template <...>`).
_WRAPPERS = frozenset(
    {"decorated_definition", "export_statement", "template_declaration", "ambient_declaration"}
)
# A function directly inside one of these is a method.
_TYPE_KINDS = frozenset(
    {"class", "struct", "impl", "trait", "interface", "object", "extension", "protocol", "enum"}
)
CODE_SEPARATOR = "."
MARKDOWN_SEPARATOR = " > "
IDENTIFIER = re.compile(r"[\w$]+")


@dataclass(frozen=True, slots=True)
class Definition:
    """One definition found in a file: its symbol path, kind and 1-based inclusive lines (with
    its decorators and the comment lines directly above it)."""

    symbol: str
    kind: str
    start_line: int
    end_line: int


# ---------------------------------------------------------------------------------------------
# Definitions


@dataclass(slots=True)
class Def:
    """A definition as whole rows: ``start`` (with its leading comments) to ``end`` (exclusive);
    ``head`` is the row where the definition proper (decorators included) begins."""

    start: int
    head: int
    end: int
    path: str
    kind: str
    node: Node | None = None
    name_bytes: tuple[int, int] = (0, 0)
    children: list[Def] = field(default_factory=list)


@dataclass(slots=True)
class _Match:
    pattern: int
    node: Node
    kind: str
    name: str
    name_bytes: tuple[int, int]


@dataclass(slots=True)
class Parsed:
    roots: list[Def]
    root_node: Node | None  # None: cut oversized gaps between paragraphs
    error_share: float
    references: list[tuple[int, str]] = field(default_factory=list)  # (row, name), by row


def _outer(node: Node) -> Node:
    parent = node.parent
    while parent is not None and parent.type in _WRAPPERS:
        node, parent = parent, parent.parent
    return node


def _comment_rows(comments: Iterable[Node], lines: Lines) -> set[int]:
    """Rows holding only comment (or attribute) text: those that may lead a definition."""
    rows: set[int] = set()
    source, starts = lines.source, lines.byte_starts
    for node in comments:
        row = node.start_point.row
        if source[starts[row] : node.start_byte].strip():
            continue  # a trailing comment after code on the same line
        rows.update(range(row, lines.last_row(node) + 1))
    return rows


def _error_share(errors: Sequence[Node], source: bytes) -> float:
    """Share of the non-blank bytes that no rule of the grammar could place: the tokens and
    fragments directly inside ERROR nodes. Intact subtrees inside an ERROR node (tree-sitter
    often wraps whole valid definitions in one) do not count."""
    bad = 0
    for error in errors:
        for child in error.children:
            if child.type != "ERROR" and (not child.is_named or child.child_count == 0):
                bad += len(b"".join(source[child.start_byte : child.end_byte].split()))
    solid = len(b"".join(source.split()))
    return bad / solid if solid else 0.0


def _node_text(node: Node, source: bytes) -> str:
    # A slice of the source in hand, not node.text: the tree was parsed through a read callback
    # (guard.py), so node.text reads the file again through it, ~60 us a name (issue 11).
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _match(pattern: int, captures: dict[str, list[Node]], source: bytes) -> _Match:
    for capture, nodes in captures.items():  # a loop, not next(<generator>): per definition
        if capture.startswith("definition."):
            node, kind = nodes[0], capture.removeprefix("definition.")
            break
    else:
        raise StopIteration  # as next() did: a pattern with a name but no definition
    name_node = captures["name"][0]
    start, end = name_node.start_byte, name_node.end_byte
    name = source[start:end].decode("utf-8", "replace")
    if "receiver" in captures:
        name = f"{_node_text(captures['receiver'][0], source)}{CODE_SEPARATOR}{name}"
    return _Match(pattern, node, kind, name, (start, end))


def _parse(language: str, lines: Lines, root: Node) -> Parsed:
    """One query pass over the parsed tree; Python work only per definition and per comment."""
    from tree_sitter import QueryCursor

    found: dict[int, _Match] = {}  # node id -> first matching pattern
    comments: list[Node] = []
    errors: list[Node] = []
    references: list[tuple[int, str]] = []
    source = lines.source
    for pattern, captures in QueryCursor(query_for(language)).matches(root):
        if "reference" in captures:  # most matches: a slice of the source, not _node_text
            for ref in captures["reference"]:
                text = source[ref.start_byte : ref.end_byte].decode("utf-8", "replace")
                references.append((ref.start_point.row, text))
        elif "comment" in captures:
            comments.extend(captures["comment"])
        elif "error" in captures:
            errors.extend(captures["error"])
        elif "name" in captures:
            match = _match(pattern, captures, source)
            known = found.get(match.node.id)
            if known is None or pattern < known.pattern:  # the first pattern in the .scm wins
                found[match.node.id] = match
    share = _error_share(errors, lines.source) if root.has_error else 0.0
    matches = sorted(found.values(), key=lambda m: (m.node.start_byte, -m.node.end_byte))
    references.sort()
    roots = _nest(matches, lines, _comment_rows(comments, lines))
    return Parsed(roots, root, share, references)


def _nest(matches: Sequence[_Match], lines: Lines, leading: set[int]) -> list[Def]:
    """Build the definition tree and make rows consistent: siblings never share a row, a child
    starts below its parent's first row, leading comments never reach into a previous sibling."""
    roots: list[Def] = []
    stack: list[tuple[int, Def]] = []  # (end byte, def) of the open ancestors
    last = lines.count - 1
    for match in matches:
        node = match.node
        start_byte, end_byte = node.start_byte, node.end_byte
        while stack and stack[-1][0] <= start_byte:
            stack.pop()
        if stack and end_byte > stack[-1][0]:
            continue  # overlaps its would-be parent (error recovery): not a definition
        parent = stack[-1][1] if stack else None
        siblings = parent.children if parent else roots
        outer = _outer(node)
        head, (end_row, end_column) = outer.start_point.row, outer.end_point
        if end_column == 0 and end_row > head:  # Lines.last_row, inlined: once a definition
            end_row -= 1
        end = min(end_row, last) + 1
        if parent is not None and (head <= parent.head or end > parent.end):
            continue  # on the parent's first row: it stays in the parent's header
        floor = siblings[-1].end if siblings else (parent.head + 1 if parent else 0)
        if head < floor:
            if siblings and end > siblings[-1].end:
                siblings[-1].end = end  # shares a row with the previous sibling: one piece
            continue
        start = head
        while start - 1 >= floor and start - 1 in leading:
            start -= 1
        kind = match.kind
        if kind == "function" and parent is not None and parent.kind in _TYPE_KINDS:
            kind = "method"
        path = f"{parent.path}{CODE_SEPARATOR}{match.name}" if parent else match.name
        definition = Def(start, head, end, path, kind, node, match.name_bytes)
        siblings.append(definition)
        stack.append((end_byte, definition))
    return roots


def _heading_level(node: Node) -> int:
    marker = node.children[-1] if node.type == "setext_heading" else node.children[0]
    digits = [char for char in marker.type if char.isdigit()]  # atx_h2_marker, setext_h1_underline
    return int(digits[0]) if digits else 1


def _heading_title(node: Node, source: bytes) -> str:
    content = node.child_by_field_name("heading_content")
    title = " ".join(_node_text(content, source).split()) if content is not None else ""
    return title or "#"


def _sections(lines: Lines, root: Node) -> Parsed:
    """Markdown sections as definitions: a heading and everything up to the next heading of the
    same or a higher level (setext headings included, `#` inside code fences excluded)."""
    from tree_sitter import QueryCursor

    headings = sorted(
        QueryCursor(query_for("markdown")).captures(root).get("heading", []),
        key=lambda node: node.start_byte,
    )
    roots: list[Def] = []
    stack: list[tuple[int, Def]] = []  # (level, section) of the open sections
    previous_row = -1
    for node in headings:
        level, row = _heading_level(node), node.start_point.row
        if row <= previous_row:
            continue  # a second heading on one row cannot start a section of whole lines
        previous_row = row
        while stack and stack[-1][0] >= level:
            stack.pop()[1].end = row
        parent = stack[-1][1] if stack else None
        title = _heading_title(node, lines.source)
        path = f"{parent.path}{MARKDOWN_SEPARATOR}{title}" if parent else title
        # no node: an oversized section is cut between paragraphs, not between syntax nodes
        section = Def(row, row, lines.count, path, "heading", None, node.byte_range)
        (parent.children if parent else roots).append(section)
        stack.append((level, section))
    return Parsed(roots, None, 0.0)


# ---------------------------------------------------------------------------------------------
# Planning: which rows go together


class Names:
    """Which names a range of rows defines (definitions whose first row, decorators included,
    lies in it) and uses (references captured by the query there, minus those it defines):
    the one answer to "what does this chunk define", from the tree-sitter queries."""

    def __init__(self, parsed: Parsed) -> None:
        heads: list[tuple[int, str]] = []
        pending = list(parsed.roots)
        while pending:
            definition = pending.pop()
            heads.append((definition.head, definition.path.rsplit(CODE_SEPARATOR, 1)[-1]))
            pending.extend(definition.children)
        heads.sort()
        # rows and names apart: a chunk's names are then one slice each, read in C
        self.head_rows = [row for row, _ in heads]
        self.head_names = [name for _, name in heads]
        self.reference_rows = [row for row, _ in parsed.references]
        self.reference_names = [name for _, name in parsed.references]

    def within(self, start: int, end: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        rows = self.head_rows
        defines = tuple(
            dict.fromkeys(self.head_names[bisect_left(rows, start) : bisect_left(rows, end)])
        )
        rows = self.reference_rows
        used = dict.fromkeys(
            self.reference_names[bisect_left(rows, start) : bisect_left(rows, end)]
        )
        if not defines:
            return defines, tuple(used)
        return defines, tuple(name for name in used if name not in defines)


def outline(path: str, text: str) -> list[Definition]:
    """Every definition the chunker sees in ``text``, parents before their children. Pure."""
    parsed = parse_any(language_for_path(path), Lines(text)) if text else None
    if parsed is None or parsed.error_share > MAX_ERROR_SHARE:
        return []
    found: list[Definition] = []
    pending = list(reversed(parsed.roots))
    while pending:
        definition = pending.pop()
        found.append(
            Definition(definition.path, definition.kind, definition.start + 1, definition.end)
        )
        pending.extend(reversed(definition.children))
    return found


@dataclass(frozen=True, slots=True)
class Header:
    """The signature lines of one definition in a text: from its first row (decorators
    included, leading comments not) to the row where its body begins, 1-based inclusive."""

    name: str
    start_line: int
    end_line: int
    kind: str = ""  # "function", "method", "class", ... (the query's definition.<kind>)
    last_line: int = 0  # the definition's last line (its body's end)


def headers(path: str, text: str) -> list[Header]:
    """The signature lines of every definition the chunker sees in ``text`` (a whole file or
    a chunk of it: a definition cut short still shows its head). Pure."""
    lines = Lines(text) if text else None
    language = language_for_path(path)
    if lines is None or language is None or language == "markdown":
        return []
    parsed = parse_any(language, lines)
    return [] if parsed is None else parsed_headers(parsed, lines)  # None: too deep or slow


def parsed_headers(parsed: Parsed, lines: Lines) -> list[Header]:
    """``headers`` of a text already parsed, by start line."""
    found: list[Header] = []
    pending = list(parsed.roots)
    while pending:
        definition = pending.pop()
        pending.extend(definition.children)
        node = definition.node
        if node is None:
            continue
        body = node.child_by_field_name("body")
        if body is None and node.named_child_count:  # `const f = () => {}`: the value's body
            value = node.named_children[0].child_by_field_name("value")
            body = value.child_by_field_name("body") if value is not None else None
        end = definition.head
        if body is not None and body.start_point.row > definition.head:
            row = body.start_point.row
            before = lines.source[lines.byte_starts[row] : body.start_byte]
            end = row if before.strip() else row - 1  # `) {` ends a signature; an indent does not
        name = definition.path.rsplit(CODE_SEPARATOR, 1)[-1]
        last = min(end, lines.count - 1) + 1
        found.append(Header(name, definition.head + 1, last, definition.kind, definition.end))
    return sorted(found, key=lambda header: header.start_line)


def parse_any(language: str | None, lines: Lines) -> Parsed | None:
    """None for plain text, and for a file too deep or too slow to parse safely (guard.py)."""
    if language is None:
        return None
    tree = parse_guarded(language, lines.source)
    if tree is None:
        return None
    if language == "markdown":
        return _sections(lines, tree.root_node)
    return _parse(language, lines, tree.root_node)
