"""Which retrieved chunks the model sees (pure): whole definitions, code first, within the
source cap and token budget counted after merging neighbours.

- Neighbouring or overlapping chunks of one file merge into one source whose text is exactly
  the union of their lines; the cap (``context_chunks``) counts those merged sources.
- A chunk cut from the middle of a long definition is shown with the signature line(s) of that
  definition and of its enclosing class (``headers``): separate small sources unless adjacent.
- Code first: at most ``NON_CODE_QUOTA`` sources that are not code (docs, tests, changelogs,
  examples, configuration) unless the question asks for that kind of file.
- Search's first results (``kept``) keep their places: the other candidates fill what is left.
- Each candidate left out is named with the rule that left it out (``Selection.left_out``).
- Neighbours merge up to ``MAX_SOURCE_LINES`` lines (beyond, they stay separate sources, so no
  chosen chunk is cut away); a single source still longer (a chunk of many short lines) is cut
  to the window of lines that holds the most question words, line numbers kept true.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from ..core.records import (
    Chunk,
    Pieces,
    Result,
    content_hash,
    enclosing_all,
    findings_within,
)
from ..core.terms import role, says, word_parts

CHARS_PER_TOKEN = 4
NON_CODE_QUOTA = 2
MAX_SOURCE_LINES = 120


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def overlaps(a: Chunk, b: Chunk) -> bool:
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def _touching(a: Chunk, b: Chunk) -> bool:
    return a.path == b.path and a.start_line <= b.end_line + 1 and b.start_line <= a.end_line + 1


def dedup_overlapping(results: Iterable[Result]) -> list[Result]:
    """Keep the first (best) of results that share lines of one file."""
    kept: list[Result] = []
    by_path: dict[str, list[Result]] = {}  # only a result of the same file can overlap
    for result in results:
        same_file = by_path.setdefault(result.chunk.path, [])
        if not any(overlaps(result.chunk, other.chunk) for other in same_file):
            kept.append(result)
            same_file.append(result)
    return kept


def _lines(chunk: Chunk) -> list[str]:
    lines = chunk.text.split("\n")
    if len(lines) == chunk.end_line - chunk.start_line + 2 and lines[-1] == "":
        lines.pop()  # the chunk's text ends with its last line's newline
    return lines


def merge_adjacent(results: Sequence[Result], max_lines: int | None = None) -> list[Result]:
    """Merge overlapping or adjacent chunks of one file (same revision) into one source whose
    text is exactly the union of their lines; order follows each group's best member. With
    ``max_lines``, adjacent chunks stay apart when their union would be longer (overlapping
    ones always merge: no line is shown twice)."""
    merged: list[Result] = []
    for result in results:
        new = result.chunk
        for i, kept in enumerate(merged):
            old = kept.chunk
            same = old.path == new.path and old.revision == new.revision
            start = min(old.start_line, new.start_line)
            end = max(old.end_line, new.end_line)
            overlapping = same and overlaps(old, new)
            touching = (
                same
                and new.start_line <= old.end_line + 1
                and old.start_line <= new.end_line + 1
                and (max_lines is None or end - start + 1 <= max_lines)
            )
            if overlapping or touching:
                merged[i] = _merge_two(kept, result)
                break
        else:
            merged.append(result)
    return merged


def _merge_two(a: Result, b: Result) -> Result:
    first, second = a.chunk, b.chunk
    by_line = dict(enumerate(_lines(second), start=second.start_line))
    by_line.update(enumerate(_lines(first), start=first.start_line))
    start, end = min(first.start_line, second.start_line), max(first.end_line, second.end_line)
    text = "\n".join(by_line[n] for n in range(start, end + 1))
    if first.text.endswith("\n") and second.text.endswith("\n"):
        text += "\n"
    # Each line keeps the symbol of the chunk it came from (a's where they overlap, as its text).
    by_symbol = {n: b.symbol_at(n) for n in range(second.start_line, second.end_line + 1)}
    by_symbol.update((n, a.symbol_at(n)) for n in range(first.start_line, first.end_line + 1))
    symbol, pieces = _pieces([(n, by_symbol[n]) for n in range(start, end + 1)], first.symbol)
    chunk = replace(
        first,
        start_line=start,
        end_line=end,
        text=text,
        content_hash=content_hash(text),
        start_byte=min(first.start_byte, second.start_byte),
        end_byte=max(first.end_byte, second.end_byte),
        symbol=symbol,
        defines=tuple(dict.fromkeys(first.defines + second.defines)),
        # both hold the findings of the lines they share
        untrusted=tuple(
            sorted(dict.fromkeys(first.untrusted + second.untrusted), key=lambda f: f.line)
        ),
    )
    score, terms = (a.score, a.terms) if a.score >= b.score else (b.score, b.terms)
    return Result(chunk, score, terms, pieces)  # the terms of the score shown


def _pieces(symbols: list[tuple[int, str | None]], alone: str | None) -> tuple[str | None, Pieces]:
    """The symbol and pieces of lines (number, symbol of its chunk) ``symbols``: one piece per
    run of lines of one symbol, and as the symbol what encloses them all (``alone`` when there
    are no lines)."""
    pieces = tuple(
        (line, symbol)
        for i, (line, symbol) in enumerate(symbols)
        if i == 0 or symbol != symbols[i - 1][1]
    )
    if len(pieces) <= 1:
        return (pieces[0][1] if pieces else alone), ()
    return enclosing_all([s for _, s in pieces]), pieces


def line_range(result: Result, start: int, end: int) -> Result:
    """Lines ``start``..``end`` (true file line numbers, within the result) as a result of their
    own; byte offsets are those of the whole result (callers re-locate by content)."""
    chunk = result.chunk
    lines = _lines(chunk)[start - chunk.start_line : end - chunk.start_line + 1]
    text = "\n".join(lines) + "\n"
    symbol, pieces = chunk.symbol, result.pieces
    if pieces:
        symbol, pieces = _pieces([(n, result.symbol_at(n)) for n in range(start, end + 1)], symbol)
    cut = replace(
        chunk,
        start_line=start,
        end_line=end,
        text=text,
        content_hash=content_hash(text),
        symbol=symbol,
        untrusted=findings_within(chunk.untrusted, start, end),
    )
    return Result(cut, result.score, result.terms, pieces)


def cut_to_terms(result: Result, terms: Iterable[str], max_lines: int = MAX_SOURCE_LINES) -> Result:
    """A source over ``max_lines`` lines cut to the window of ``max_lines`` holding the most
    question words (the earliest such window: a definition's signature comes first)."""
    lines = _lines(result.chunk)
    if len(lines) <= max_lines:
        return result
    wanted = set(terms)
    hits = [
        sum(1 for word in word_parts(line) if any(says(word, term) for term in wanted))
        for line in lines
    ]
    starts = range(len(lines) - max_lines + 1)
    best_at = max(starts, key=lambda at: (sum(hits[at : at + max_lines]), -at))
    start = result.chunk.start_line + best_at
    return line_range(result, start, start + max_lines - 1)


def _overlaps_any(result: Result, others: Iterable[Result]) -> bool:
    return any(overlaps(result.chunk, other.chunk) for other in others)


@dataclass(frozen=True)
class Selection:
    sources: list[Result]  # the prompt's, best first
    # Each candidate not chosen, by chunk id: the rule that left it out (``floor``,
    # ``non_code_quota``, ``source_cap``, ``token_budget``).
    left_out: dict[str, str]


@dataclass(frozen=True)
class LeftOut:
    """One of search's first results that is not wholly among the prompt's sources."""

    rank: int  # its place in the search's list, from 1
    result: Result
    rule: str  # the rule that left it out (see :func:`left_out_of`)


def wholly_in(result: Result, sources: Iterable[Result]) -> bool:
    """Whether every line of ``result`` is among the lines of ``sources`` of its file."""
    chunk = result.chunk
    held = set(range(chunk.start_line, chunk.end_line + 1))
    for source in sources:
        if source.chunk.path == chunk.path:
            held -= set(range(source.chunk.start_line, source.chunk.end_line + 1))
    return not held


def left_out_of(
    first: Sequence[Result],
    selection: Selection,
    sources: Sequence[Result],
    gone: Iterable[str] = (),
) -> list[LeftOut]:
    """Which of ``first`` (search's first results) are not wholly among ``sources`` (the
    prompt's, from ``selection``), each with the rule that left it out: ``changed_on_disk`` (its
    file no longer holds its lines, ``gone``), the selection's rule, ``source_lines`` (chosen,
    its source was cut to the lines holding the most question words), or ``duplicate_span``
    (its lines are a better candidate's, which took its place among the candidates)."""
    gone = set(gone)
    found = []
    for rank, result in enumerate(first, start=1):
        chunk = result.chunk
        if wholly_in(result, sources):
            continue
        if chunk.path in gone:
            rule = "changed_on_disk"
        elif chunk.id in selection.left_out:
            rule = selection.left_out[chunk.id]
        elif any(overlaps(chunk, source.chunk) for source in sources):
            rule = "source_lines"
        else:
            rule = "duplicate_span"
        found.append(LeftOut(rank, result, rule))
    return found


def select_sources(
    candidates: Sequence[Result],
    *,
    max_sources: int,
    token_budget: int,
    floor: float,
    asked: frozenset[str],
    terms: Iterable[str],
    headers_for: Callable[[Result], list[Result]],
    kept: Sequence[Result] = (),
) -> Selection:
    """The prompt's sources, best first: candidates clearing ``floor``, each with its
    definition's signature lines, merged with neighbours; at most ``max_sources`` merged sources
    and ``token_budget`` tokens, non-code sources limited to ``NON_CODE_QUOTA`` unless asked.
    ``kept`` (search's first results): each that clears the floor keeps a place, a source and
    its tokens, that the other candidates cannot take until it has been chosen or left out."""
    terms = list(terms)
    selected: list[Result] = []
    bodies: list[Result] = []  # the candidates chosen (not their signature lines)
    left_out: dict[str, str] = {}
    owed = {k.chunk.id: estimate_tokens(k.chunk.text) for k in kept if k.score >= floor}
    non_code = 0
    for result in candidates:
        chunk = result.chunk
        keeping = owed.pop(chunk.id, None) is not None
        # what the places still kept for others take (none for one of them: they compete)
        places, tokens = (0, 0) if keeping else (len(owed), sum(owed.values()))
        rule = None
        if result.score < floor:
            rule = "floor"
        kind = role(chunk.path, chunk.language)
        supporting = kind != "code" and kind not in asked
        if rule is None and supporting and non_code >= NON_CODE_QUOTA:
            rule = "non_code_quota"
        full = sum(1 for s in selected if _overlaps_any(s, bodies)) + places >= max_sources
        if rule is None and full and not any(_touching(chunk, s.chunk) for s in selected):
            rule = "source_cap"  # only a neighbour of a kept source can still join
        if rule is not None:
            left_out[chunk.id] = rule
            continue
        heads = [h for h in headers_for(result) if not _overlaps_any(h, selected)]
        merged = merge_adjacent([*selected, *heads, result], MAX_SOURCE_LINES)
        trial = [cut_to_terms(source, terms) for source in merged]
        # a source of signature lines alone belongs to the source it introduces: not counted
        counted = sum(1 for s in merged if _overlaps_any(s, [*bodies, result]))
        if counted + places > max_sources:
            left_out[chunk.id] = "source_cap"  # only a neighbour of a kept source can still join
            continue
        cost = sum(estimate_tokens(s.chunk.text) for s in trial)
        if cost + tokens > token_budget:
            # too big for what is left (or for any prompt: a very long line)
            left_out[chunk.id] = "token_budget"
            continue
        selected = merged
        bodies.append(result)
        non_code += supporting
    return Selection([cut_to_terms(source, terms) for source in selected], left_out)
