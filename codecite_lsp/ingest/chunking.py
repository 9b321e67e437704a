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

Each chunk carries what in it is addressed to an AI reader (injection.py), at file lines: the
index stores it, so a prompt source, a search result and the index report know the chunk is
untrusted without scanning it again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import pairwise
from typing import TYPE_CHECKING

from ..core.records import Chunk, content_hash
from .injection import at_lines, split_between
from .languages import TEXT_LANGUAGE, language_for_path
from .lines import Lines
from .syntax import MAX_ERROR_SHARE, Def, Names, parse_any

if TYPE_CHECKING:
    from tree_sitter import Node

# Above this share of the non-blank bytes loose in ERROR nodes, the tree is not worth following.


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

    def __init__(self, lines: Lines, budget: int) -> None:
        self.lines = lines
        self.budget = budget

    def plan(self, roots: list[Def], root_node: Node | None) -> list[_Span]:
        return self._level(0, self.lines.count, roots, None, root_node)

    def paragraphs(self) -> list[_Span]:
        return [
            _Span(start, end, None, "paragraph")
            for start, end in self._cut(0, self.lines.count, None)
        ]

    def _level(
        self, lo: int, hi: int, defs: list[Def], parent: Def | None, node: Node | None
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

    def _split(self, definition: Def) -> list[_Span]:
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
        sizes, budget = self.lines.char_starts, self.budget

        def flush() -> None:
            if not group:
                return
            if len(group) == 1:  # most groups: what the lists below find, for one piece
                piece = group.pop()
                blank = self.lines.is_blank_range(piece.start, piece.end)
                symbol = piece.symbol if piece.is_def else parent_symbol
                spans.append(
                    _Span(piece.start, piece.end, symbol, "block" if blank else piece.kind)
                )
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
                and sizes[piece.end] - sizes[group[0].start] <= budget  # Lines.size, inlined
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
        sizes, budget = self.lines.char_starts, self.budget
        for start, end in segments:
            if packed and sizes[end] - sizes[packed[-1][0]] <= budget:  # Lines.size, inlined
                packed[-1] = (packed[-1][0], end)
            else:
                packed.append((start, end))
        return packed

    def _cut_rows(self, lo: int, hi: int, node: Node) -> set[int]:
        """Rows where a child of ``node`` begins or ends, descending into children over the
        budget. Only the children overlapping rows lo..hi-1 are visited; no recursion, since
        expression chains can nest thousands deep."""
        lines, rows, budget = self.lines, set(), self.budget
        start_byte, end_byte = lines.byte_starts[lo], lines.byte_starts[hi]
        sizes, final = lines.char_starts, lines.count - 1
        pending = [node]
        while pending:
            # a cursor, not Node.first_named_child_for_byte: that one crashes when no child is found
            cursor = pending.pop().walk()
            found = cursor.goto_first_child_for_byte(start_byte) is not None
            while found and (child := cursor.node) is not None and child.start_byte < end_byte:
                if child.is_named:
                    # Lines.last_row and Lines.size, inlined: this runs for every statement
                    first, (last, column) = child.start_point.row, child.end_point
                    if column == 0 and last > first:
                        last -= 1
                    last = min(last, final) + 1
                    rows.add(first)
                    rows.add(last)
                    if sizes[min(last, hi)] - sizes[max(first, lo)] > budget:
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
        lines = Lines(text)
    except UnicodeEncodeError as exc:
        raise ValueError(f"{path}: not valid Unicode text ({exc.reason} at {exc.start})") from None
    language = language_for_path(path)
    parsed = parse_any(language, lines)
    planner = _Planner(lines, budget)
    if parsed is None or parsed.error_share > MAX_ERROR_SHARE:
        spans = planner.paragraphs()
    else:
        try:
            spans = planner.plan(parsed.roots, parsed.root_node)
        except RecursionError:  # definitions nested deeper than Python's stack allows
            spans = planner.paragraphs()
    chunk_language = language or TEXT_LANGUAGE
    names = Names(parsed) if parsed is not None and language != "markdown" else None
    chunks = []
    spans = planner.fold_blank(spans)
    for span in spans:
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
                untrusted=at_lines(chunk, span.start + 1),
            )
        )
    return _mark_split_directives(chunks, spans, lines)


# Lines either side of a boundary read together: a directive and what it tells the reader to
# say stand within a few lines of each other.
_FACING_LINES = 3


def _mark_split_directives(chunks: list[Chunk], spans: list[_Span], lines: Lines) -> list[Chunk]:
    """Both chunks of a boundary that cuts a directive in two carry it: the first at the line it
    starts, the second at its own first line (its text is what the directive has said)."""
    for index, (left, right) in enumerate(pairwise(spans)):
        first = max(left.start, left.end - _FACING_LINES)
        split = split_between(
            lines.text(first, right.start),
            lines.text(right.start, min(right.end, right.start + _FACING_LINES)),
        )
        if not split:
            continue
        before, after = chunks[index], chunks[index + 1]
        at_file = tuple(replace(f, line=f.line + first) for f in split)
        chunks[index] = replace(before, untrusted=before.untrusted + at_file)
        at_start = tuple(replace(f, line=after.start_line) for f in split)
        chunks[index + 1] = replace(after, untrusted=at_start + after.untrusted)
    return chunks
