"""Cut a file into syntax-bounded chunks of whole lines (pure: no I/O).

How a file is cut:

* Code is parsed once with tree-sitter and queried once with ``queries/<language>.scm``, which
  captures definitions (``@definition.<kind>``), their names and comments. A definition's chunk
  starts at its decorators/attributes and at the comment lines directly above it (no blank line
  between) and ends on its last line.
* A definition within the budget is one piece. One over the budget is split at its child
  definitions (a class into its methods, symbol ``Class.method``; the header/fields part keeps the
  class's symbol); a definition without children over the budget is split between its statements
  (recursively into oversized blocks) and keeps its own symbol; a piece still too large is split
  between lines. A single line longer than the budget is one chunk: lines are never cut.
* Neighbouring pieces of one level (imports, constants, short functions, the methods of a split
  class) are merged greedily up to the budget. A merged chunk's kind is ``"block"``; its symbol
  is that of the one definition in it, if there is exactly one, else the enclosing definition's
  (None at the top level). Blank lines joining a piece do not make it a merged block.
* Markdown is cut the same way with sections as definitions (heading + body, nested by level,
  symbol ``"Operations > Key rotation"``, kind ``"heading"``). Plain text, and code whose parse is
  mostly errors (more than ``MAX_ERROR_SHARE`` of its non-blank bytes loose in ERROR nodes), is
  cut into blank-line paragraphs merged up to the budget (kind ``"paragraph"``, symbol None).

Lines end at ``"\\n"`` only (a ``"\\r"`` before it stays in the line's text), exactly as
tree-sitter counts rows; the budget counts a ``"\\r\\n"`` as one character, so CRLF and LF
checkouts are cut alike (and hash alike). The chunks of a file cover each of its lines exactly
once, in order; an empty file has no chunks (a blank one has one). A chunk of blank lines alone is
folded into a neighbour when that fits the budget.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, pairwise
from typing import TYPE_CHECKING, Literal

from ..core.records import Chunk, content_hash
from .guard import parse_guarded
from .languages import TEXT_LANGUAGE, language_for_path, query_for

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
_CODE_SEPARATOR = "."
_MARKDOWN_SEPARATOR = " > "
_IDENTIFIER = re.compile(r"[\w$]+")


@dataclass(frozen=True, slots=True)
class SymbolAtPosition:
    """The identifier under a position and the definition(s) around it.

    ``enclosing`` is the symbol path of the innermost definition containing the position
    (``"KeyStore.rotate_key"``), None outside any definition; ``on_definition`` is True when the
    position is on that definition's own name. Lines are 1-based in ``enclosing_lines``.
    """

    name: str
    enclosing: str | None
    on_definition: bool
    enclosing_kind: str | None = None
    enclosing_lines: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Definition:
    """One definition found in a file: its symbol path, kind and 1-based inclusive lines (with
    its decorators and the comment lines directly above it)."""

    symbol: str
    kind: str
    start_line: int
    end_line: int


# ---------------------------------------------------------------------------------------------
# Lines


def _lf_len(line: str) -> int:
    return len(line) - 1 if line.endswith("\r\n") else len(line)


class _Lines:
    """A file's lines (``"\\n"``-terminated, the last one possibly not) with prefix sums of their
    lengths in characters and UTF-8 bytes, so any range's size is O(1)."""

    __slots__ = ("byte_starts", "char_starts", "count", "lines", "solid_starts", "source")

    def __init__(self, text: str) -> None:
        parts = text.split("\n")
        lines = [part + "\n" for part in parts[:-1]]
        if parts[-1]:
            lines.append(parts[-1])
        self.lines = lines
        self.count = len(lines)
        lengths = list(accumulate(map(len, lines), initial=0))
        # sizes count a "\r\n" as one character, so a CRLF checkout is cut like an LF one
        self.char_starts = (
            lengths if "\r" not in text else list(accumulate(map(_lf_len, lines), initial=0))
        )
        # non-blank lines before each row: blank checks of any range are O(1) too
        self.solid_starts = list(accumulate(map(bool, map(str.strip, lines)), initial=0))
        if text.isascii():
            self.byte_starts = lengths
            self.source = text.encode("ascii")
        else:
            self.source = text.encode("utf-8")  # first: fails fast on a lone surrogate
            self.byte_starts = list(
                accumulate((len(line.encode("utf-8")) for line in lines), initial=0)
            )

    def size(self, start: int, end: int) -> int:
        """Characters in rows start..end-1 (a "\r\n" counts as one)."""
        return self.char_starts[end] - self.char_starts[start]

    def text(self, start: int, end: int) -> str:
        return "".join(self.lines[start:end])

    def is_blank(self, row: int) -> bool:
        return self.solid_starts[row + 1] == self.solid_starts[row]

    def is_blank_range(self, start: int, end: int) -> bool:
        return self.solid_starts[end] == self.solid_starts[start]

    def last_row(self, node: Node) -> int:
        """A node ending at column 0 (it swallowed a newline) ends on the row before."""
        end = node.end_point
        if end.column == 0 and end.row > node.start_point.row:
            return min(end.row - 1, self.count - 1)
        return min(end.row, self.count - 1)


# ---------------------------------------------------------------------------------------------
# Definitions


@dataclass(slots=True)
class _Def:
    """A definition as whole rows: ``start`` (with its leading comments) to ``end`` (exclusive);
    ``head`` is the row where the definition proper (decorators included) begins."""

    start: int
    head: int
    end: int
    path: str
    kind: str
    node: Node | None = None
    name_bytes: tuple[int, int] = (0, 0)
    children: list[_Def] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Match:
    pattern: int
    node: Node
    kind: str
    name: str
    name_bytes: tuple[int, int]


@dataclass(slots=True)
class _Parsed:
    roots: list[_Def]
    root_node: Node | None  # None: cut oversized gaps between paragraphs
    error_share: float
    references: list[tuple[int, str]] = field(default_factory=list)  # (row, name), by row


def _outer(node: Node) -> Node:
    parent = node.parent
    while parent is not None and parent.type in _WRAPPERS:
        node, parent = parent, parent.parent
    return node


def _comment_rows(comments: Iterable[Node], lines: _Lines) -> set[int]:
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


def _node_text(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text else ""


def _match(pattern: int, captures: dict[str, list[Node]]) -> _Match:
    kind, nodes = next((k, v) for k, v in captures.items() if k.startswith("definition."))
    name_node = captures["name"][0]
    name = _node_text(name_node)
    if "receiver" in captures:
        name = f"{_node_text(captures['receiver'][0])}{_CODE_SEPARATOR}{name}"
    return _Match(
        pattern,
        nodes[0],
        kind.removeprefix("definition."),
        name,
        (name_node.start_byte, name_node.end_byte),
    )


def _parse(language: str, lines: _Lines, root: Node) -> _Parsed:
    """One query pass over the parsed tree; Python work only per definition and per comment."""
    from tree_sitter import QueryCursor

    found: dict[int, _Match] = {}  # node id -> first matching pattern
    comments: list[Node] = []
    errors: list[Node] = []
    references: list[tuple[int, str]] = []
    source = lines.source
    for pattern, captures in QueryCursor(query_for(language)).matches(root):
        if "reference" in captures:
            for ref in captures["reference"]:
                name = source[ref.start_byte : ref.end_byte].decode("utf-8", "replace")
                references.append((ref.start_point.row, name))
        elif "comment" in captures:
            comments.extend(captures["comment"])
        elif "error" in captures:
            errors.extend(captures["error"])
        elif "name" in captures:
            match = _match(pattern, captures)
            known = found.get(match.node.id)
            if known is None or pattern < known.pattern:  # the first pattern in the .scm wins
                found[match.node.id] = match
    share = _error_share(errors, lines.source) if root.has_error else 0.0
    matches = sorted(found.values(), key=lambda m: (m.node.start_byte, -m.node.end_byte))
    references.sort()
    roots = _nest(matches, lines, _comment_rows(comments, lines))
    return _Parsed(roots, root, share, references)


def _nest(matches: Sequence[_Match], lines: _Lines, leading: set[int]) -> list[_Def]:
    """Build the definition tree and make rows consistent: siblings never share a row, a child
    starts below its parent's first row, leading comments never reach into a previous sibling."""
    roots: list[_Def] = []
    stack: list[tuple[int, _Def]] = []  # (end byte, def) of the open ancestors
    for match in matches:
        node = match.node
        while stack and stack[-1][0] <= node.start_byte:
            stack.pop()
        if stack and node.end_byte > stack[-1][0]:
            continue  # overlaps its would-be parent (error recovery): not a definition
        parent = stack[-1][1] if stack else None
        siblings = parent.children if parent else roots
        outer = _outer(node)
        head, end = outer.start_point.row, lines.last_row(outer) + 1
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
        path = f"{parent.path}{_CODE_SEPARATOR}{match.name}" if parent else match.name
        definition = _Def(start, head, end, path, kind, node, match.name_bytes)
        siblings.append(definition)
        stack.append((node.end_byte, definition))
    return roots


def _heading_level(node: Node) -> int:
    marker = node.children[-1] if node.type == "setext_heading" else node.children[0]
    digits = [char for char in marker.type if char.isdigit()]  # atx_h2_marker, setext_h1_underline
    return int(digits[0]) if digits else 1


def _heading_title(node: Node) -> str:
    content = node.child_by_field_name("heading_content")
    title = " ".join(_node_text(content).split()) if content is not None else ""
    return title or "#"


def _sections(lines: _Lines, root: Node) -> _Parsed:
    """Markdown sections as definitions: a heading and everything up to the next heading of the
    same or a higher level (setext headings included, `#` inside code fences excluded)."""
    from tree_sitter import QueryCursor

    headings = sorted(
        QueryCursor(query_for("markdown")).captures(root).get("heading", []),
        key=lambda node: node.start_byte,
    )
    roots: list[_Def] = []
    stack: list[tuple[int, _Def]] = []  # (level, section) of the open sections
    previous_row = -1
    for node in headings:
        level, row = _heading_level(node), node.start_point.row
        if row <= previous_row:
            continue  # a second heading on one row cannot start a section of whole lines
        previous_row = row
        while stack and stack[-1][0] >= level:
            stack.pop()[1].end = row
        parent = stack[-1][1] if stack else None
        title = _heading_title(node)
        path = f"{parent.path}{_MARKDOWN_SEPARATOR}{title}" if parent else title
        # no node: an oversized section is cut between paragraphs, not between syntax nodes
        section = _Def(row, row, lines.count, path, "heading", None, node.byte_range)
        (parent.children if parent else roots).append(section)
        stack.append((level, section))
    return _Parsed(roots, None, 0.0)


# ---------------------------------------------------------------------------------------------
# Planning: which rows go together


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int  # exclusive
    symbol: str | None
    kind: str


@dataclass(slots=True)
class _Piece:
    start: int
    end: int
    symbol: str | None
    kind: str
    is_def: bool
    sealed: bool = False  # part of a split definition: never merged with neighbours


class _Planner:
    """Decides the row ranges of a file's chunks; sizes come from the prefix sums of ``lines``."""

    def __init__(self, lines: _Lines, budget: int) -> None:
        self.lines = lines
        self.budget = budget

    def plan(self, roots: list[_Def], root_node: Node | None) -> list[_Span]:
        return self._level(0, self.lines.count, roots, None, root_node)

    def paragraphs(self) -> list[_Span]:
        return [
            _Span(start, end, None, "paragraph")
            for start, end in self._cut(0, self.lines.count, None)
        ]

    def _level(
        self, lo: int, hi: int, defs: list[_Def], parent: _Def | None, node: Node | None
    ) -> list[_Span]:
        """Rows lo..hi-1 holding sibling definitions ``defs`` (children of ``parent``)."""
        symbol = parent.path if parent else None
        pieces: list[_Piece] = []
        cursor = lo
        for definition in defs:
            if definition.start > cursor:
                # the part of a parent above its first child is the parent's header
                header = parent is not None and cursor == lo
                kind = parent.kind if header and parent else "block"
                pieces.extend(self._fill(cursor, definition.start, symbol, kind, header, node))
            if self.lines.size(definition.start, definition.end) <= self.budget:
                pieces.append(
                    _Piece(definition.start, definition.end, definition.path, definition.kind, True)
                )
            else:
                pieces.extend(
                    _Piece(span.start, span.end, span.symbol, span.kind, True, sealed=True)
                    for span in self._split(definition)
                )
            cursor = definition.end
        if cursor < hi:
            pieces.extend(self._fill(cursor, hi, symbol, "block", False, node))
        return self._merge(pieces, symbol)

    def _fill(
        self, lo: int, hi: int, symbol: str | None, kind: str, is_def: bool, node: Node | None
    ) -> list[_Piece]:
        """Rows between definitions, cut to the budget (the pieces may still join neighbours)."""
        if self.lines.size(lo, hi) <= self.budget:
            return [_Piece(lo, hi, symbol, kind, is_def)]
        return [_Piece(start, end, symbol, kind, is_def) for start, end in self._cut(lo, hi, node)]

    def _split(self, definition: _Def) -> list[_Span]:
        if definition.children:
            return self._level(
                definition.start, definition.end, definition.children, definition, definition.node
            )
        return [
            _Span(start, end, definition.path, definition.kind)
            for start, end in self._cut(definition.start, definition.end, definition.node)
        ]

    def _merge(self, pieces: list[_Piece], parent_symbol: str | None) -> list[_Span]:
        """Greedy: neighbours join while the budget allows; sealed pieces stay alone."""
        spans: list[_Span] = []
        group: list[_Piece] = []

        def flush() -> None:
            if not group:
                return
            definitions = [piece for piece in group if piece.is_def]
            # blank lines joining a piece do not make it a merged block
            solid = [
                piece for piece in group if not self.lines.is_blank_range(piece.start, piece.end)
            ]
            symbol = definitions[0].symbol if len(definitions) == 1 else parent_symbol
            kind = solid[0].kind if len(solid) == 1 else "block"
            spans.append(_Span(group[0].start, group[-1].end, symbol, kind))
            group.clear()

        for piece in pieces:
            if (
                group
                and not piece.sealed
                and not group[-1].sealed
                and self.lines.size(group[0].start, piece.end) <= self.budget
            ):
                group.append(piece)
                continue
            flush()
            group.append(piece)
        flush()
        return spans

    def _cut(self, lo: int, hi: int, node: Node | None) -> list[tuple[int, int]]:
        """Rows lo..hi-1 as ranges within the budget, cut where a statement (or, without a syntax
        tree, a paragraph) begins, and between lines where nothing else fits."""
        rows = sorted(
            self._cut_rows(lo, hi, node) if node is not None else self._paragraphs(lo, hi)
        )
        bounds = [lo, *(row for row in rows if lo < row < hi), hi]
        segments: list[tuple[int, int]] = []
        for start, end in pairwise(bounds):
            if start == end:
                continue
            if self.lines.size(start, end) <= self.budget:
                segments.append((start, end))
            else:
                segments.extend((row, row + 1) for row in range(start, end))
        return self._pack(segments)

    def _pack(self, segments: list[tuple[int, int]]) -> list[tuple[int, int]]:
        packed: list[tuple[int, int]] = []
        for start, end in segments:
            if packed and self.lines.size(packed[-1][0], end) <= self.budget:
                packed[-1] = (packed[-1][0], end)
            else:
                packed.append((start, end))
        return packed

    def _cut_rows(self, lo: int, hi: int, node: Node) -> set[int]:
        """Rows where a child of ``node`` begins or ends, descending into children over the
        budget. Only the children overlapping rows lo..hi-1 are visited; no recursion, since
        expression chains can nest thousands deep."""
        lines, rows = self.lines, set()
        start_byte, end_byte = lines.byte_starts[lo], lines.byte_starts[hi]
        pending = [node]
        while pending:
            # a cursor, not Node.first_named_child_for_byte: that one crashes when no child is found
            cursor = pending.pop().walk()
            found = cursor.goto_first_child_for_byte(start_byte) is not None
            while found and (child := cursor.node) is not None and child.start_byte < end_byte:
                if child.is_named:
                    first, last = child.start_point.row, lines.last_row(child) + 1
                    rows.add(first)
                    rows.add(last)
                    if lines.size(max(first, lo), min(last, hi)) > self.budget:
                        pending.append(child)
                found = cursor.goto_next_sibling()
        return rows

    def _paragraphs(self, lo: int, hi: int) -> set[int]:
        """Rows that begin a paragraph (a non-blank line after a blank one)."""
        lines = self.lines
        return {
            row for row in range(lo + 1, hi) if lines.is_blank(row - 1) and not lines.is_blank(row)
        }

    def fold_blank(self, spans: list[_Span]) -> list[_Span]:
        """A chunk of blank lines alone says nothing: give its rows to a neighbour that fits."""
        lines, folded = self.lines, list(spans)
        index = 0
        while index < len(folded) and len(folded) > 1:
            span = folded[index]
            if not lines.is_blank_range(span.start, span.end):
                index += 1
                continue
            before = folded[index - 1] if index > 0 else None
            after = folded[index + 1] if index + 1 < len(folded) else None
            if before and lines.size(before.start, span.end) <= self.budget:
                folded[index - 1 : index + 1] = [
                    _Span(before.start, span.end, before.symbol, before.kind)
                ]
            elif after and lines.size(span.start, after.end) <= self.budget:
                folded[index : index + 2] = [_Span(span.start, after.end, after.symbol, after.kind)]
            else:
                index += 1
        return folded


# ---------------------------------------------------------------------------------------------
# Public API


def chunk_text(path: str, text: str, *, revision: str, budget: int = 1800) -> list[Chunk]:
    """Cut ``text`` (the decoded file at ``path``) into chunks of at most ``budget`` characters
    (a single longer line excepted). Pure; an empty text gives no chunks."""
    if budget < 1:
        raise ValueError(f"chunk budget must be positive, got {budget}")
    if not text:
        return []
    try:
        lines = _Lines(text)
    except UnicodeEncodeError as exc:
        raise ValueError(f"{path}: not valid Unicode text ({exc.reason} at {exc.start})") from None
    language = language_for_path(path)
    parsed = _parse_any(language, lines)
    planner = _Planner(lines, budget)
    if parsed is None or parsed.error_share > MAX_ERROR_SHARE:
        spans = planner.paragraphs()
    else:
        try:
            spans = planner.plan(parsed.roots, parsed.root_node)
        except RecursionError:  # definitions nested deeper than Python's stack allows
            spans = planner.paragraphs()
    chunk_language = language or TEXT_LANGUAGE
    names = _Names(parsed) if parsed is not None and language != "markdown" else None
    chunks = []
    for span in planner.fold_blank(spans):
        chunk = lines.text(span.start, span.end)
        defines, uses = names.within(span.start, span.end) if names else ((), ())
        chunks.append(
            Chunk(
                path=path,
                language=chunk_language,
                start_line=span.start + 1,
                end_line=span.end,
                start_byte=lines.byte_starts[span.start],
                end_byte=lines.byte_starts[span.end],
                symbol=span.symbol,
                kind=span.kind,
                text=chunk,
                content_hash=content_hash(chunk),
                revision=revision,
                defines=defines,
                uses=uses,
            )
        )
    return chunks


class _Names:
    """Which names a range of rows defines (definitions whose first row, decorators included,
    lies in it) and uses (references captured by the query there, minus those it defines):
    the one answer to "what does this chunk define", from the tree-sitter queries."""

    def __init__(self, parsed: _Parsed) -> None:
        heads: list[tuple[int, str]] = []
        pending = list(parsed.roots)
        while pending:
            definition = pending.pop()
            heads.append((definition.head, definition.path.rsplit(_CODE_SEPARATOR, 1)[-1]))
            pending.extend(definition.children)
        heads.sort()
        self.heads = heads
        self.head_rows = [row for row, _ in heads]
        self.references = parsed.references
        self.reference_rows = [row for row, _ in parsed.references]

    def within(self, start: int, end: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        lo, hi = bisect_left(self.head_rows, start), bisect_left(self.head_rows, end)
        defines = tuple(dict.fromkeys(name for _, name in self.heads[lo:hi]))
        lo, hi = bisect_left(self.reference_rows, start), bisect_left(self.reference_rows, end)
        used = dict.fromkeys(name for _, name in self.references[lo:hi])
        return defines, tuple(name for name in used if name not in defines)


def outline(path: str, text: str) -> list[Definition]:
    """Every definition the chunker sees in ``text``, parents before their children. Pure."""
    parsed = _parse_any(language_for_path(path), _Lines(text)) if text else None
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


def headers(path: str, text: str) -> list[Header]:
    """The signature lines of every definition the chunker sees in ``text`` (a whole file or
    a chunk of it: a definition cut short still shows its head). Pure."""
    lines = _Lines(text) if text else None
    language = language_for_path(path)
    if lines is None or language is None or language == "markdown":
        return []
    parsed = _parse_any(language, lines)
    if parsed is None:
        return []  # too deep or too slow to parse safely
    found: list[Header] = []
    pending = list(parsed.roots)
    while pending:
        definition = pending.pop()
        pending.extend(definition.children)
        node = definition.node
        if node is None:
            continue
        body = node.child_by_field_name("body")
        end = definition.head
        if body is not None and body.start_point.row > definition.head:
            row = body.start_point.row
            before = lines.source[lines.byte_starts[row] : body.start_byte]
            end = row if before.strip() else row - 1  # `) {` ends a signature; an indent does not
        name = definition.path.rsplit(_CODE_SEPARATOR, 1)[-1]
        found.append(Header(name, definition.head + 1, min(end, lines.count - 1) + 1))
    return sorted(found, key=lambda header: header.start_line)


def _parse_any(language: str | None, lines: _Lines) -> _Parsed | None:
    """None for plain text, and for a file too deep or too slow to parse safely (guard.py)."""
    if language is None:
        return None
    tree = parse_guarded(language, lines.source)
    if tree is None:
        return None
    if language == "markdown":
        return _sections(lines, tree.root_node)
    return _parse(language, lines, tree.root_node)


Encoding = Literal["utf-16", "utf-32", "utf-8"]


def _codepoint_index(line: str, character: int, encoding: Encoding) -> int:
    """LSP positions count UTF-16 code units by default; convert to an index into ``line``."""
    if encoding == "utf-32":
        return min(character, len(line))
    units = 0
    for index, char in enumerate(line):
        if units >= character:
            return index
        if encoding == "utf-16":
            units += 2 if ord(char) > 0xFFFF else 1
        else:
            units += len(char.encode("utf-8"))
    return len(line)


def _identifier_at(line: str, index: int) -> re.Match[str] | None:
    words = list(_IDENTIFIER.finditer(line))
    inside = next((m for m in words if m.start() <= index < m.end()), None)
    return inside or next((m for m in words if m.end() == index), None)


def symbol_at(
    path: str, text: str, line: int, character: int, *, encoding: Encoding = "utf-16"
) -> SymbolAtPosition | None:
    """The identifier at 0-based ``line``/``character`` and the definitions around it. Pure.

    ``character`` counts UTF-16 code units (the LSP default); pass ``encoding="utf-32"`` for
    code points or ``"utf-8"`` for bytes when the client negotiated another position encoding.
    A position just after an identifier counts as on it. None when no identifier is there.
    """
    if not text:
        return None
    try:
        lines = _Lines(text)
    except UnicodeEncodeError:  # a lone surrogate sent by a client: nothing sensible to show
        return None
    if not 0 <= line < lines.count:
        return None
    row = lines.lines[line]
    index = _codepoint_index(row, character, encoding)
    found = _identifier_at(row, index)
    if found is None:
        return None
    parsed = _parse_any(language_for_path(path), lines)
    offset = lines.byte_starts[line] + len(row[: found.start()].encode("utf-8"))
    innermost: _Def | None = None
    level = parsed.roots if parsed else []
    while True:
        inside = next((d for d in level if d.start <= line < d.end), None)
        if inside is None:
            break
        innermost, level = inside, inside.children
    if innermost is None:
        return SymbolAtPosition(found.group(), None, False)
    name_start, name_end = innermost.name_bytes
    return SymbolAtPosition(
        name=found.group(),
        enclosing=innermost.path,
        on_definition=name_start <= offset < name_end,
        enclosing_kind=innermost.kind,
        enclosing_lines=(innermost.start + 1, innermost.end),
    )
