"""Which retrieved chunks the model sees (pure): whole definitions, code first, within the
source cap and token budget counted after merging neighbours.

- Neighbouring or overlapping chunks of one file merge into one source whose text is exactly
  the union of their lines; the cap (``context_chunks``) counts those merged sources.
- A chunk cut from the middle of a long definition is shown with the signature line(s) of that
  definition and of its enclosing class (``headers``): separate small sources unless adjacent.
- Code first: at most ``NON_CODE_QUOTA`` sources that are not code (docs, tests, changelogs,
  examples, configuration) unless the question asks for that kind of file.
- Neighbours merge up to ``MAX_SOURCE_LINES`` lines (beyond, they stay separate sources, so no
  chosen chunk is cut away); a single source still longer (a chunk of many short lines) is cut
  to the window of lines that holds the most question words, line numbers kept true.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from ..core.records import Chunk, Result, content_hash, enclosing_all, findings_within
from ..core.terms import role, says, word_parts

CHARS_PER_TOKEN = 4
NON_CODE_QUOTA = 2
MAX_SOURCE_LINES = 120


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def result_from_chunk(
    chunk: Chunk, score: float, terms: tuple[tuple[str, float], ...] = ()
) -> Result:
    return Result(
        path=chunk.path,
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        symbol=chunk.symbol,
        score=score,
        content_hash=chunk.content_hash,
        text=chunk.text,
        language=chunk.language,
        kind=chunk.kind,
        start_byte=chunk.start_byte,
        end_byte=chunk.end_byte,
        revision=chunk.revision,
        defines=chunk.defines,
        untrusted=chunk.untrusted,
        terms=terms,
    )


def overlaps(a: Result | Chunk, b: Result | Chunk) -> bool:
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def _touching(a: Result, b: Result) -> bool:
    return a.path == b.path and a.start_line <= b.end_line + 1 and b.start_line <= a.end_line + 1


def dedup_overlapping(results: Iterable[Result]) -> list[Result]:
    """Keep the first (best) of results that share lines of one file."""
    kept: list[Result] = []
    by_path: dict[str, list[Result]] = {}  # only a result of the same file can overlap
    for result in results:
        same_file = by_path.setdefault(result.path, [])
        if not any(overlaps(result, other) for other in same_file):
            kept.append(result)
            same_file.append(result)
    return kept


def _lines(result: Result) -> list[str]:
    lines = result.text.split("\n")
    if len(lines) == result.end_line - result.start_line + 2 and lines[-1] == "":
        lines.pop()  # the chunk's text ends with its last line's newline
    return lines


def merge_adjacent(results: Sequence[Result], max_lines: int | None = None) -> list[Result]:
    """Merge overlapping or adjacent chunks of one file (same revision) into one source whose
    text is exactly the union of their lines; order follows each group's best member. With
    ``max_lines``, adjacent chunks stay apart when their union would be longer (overlapping
    ones always merge: no line is shown twice)."""
    merged: list[Result] = []
    for result in results:
        for i, kept in enumerate(merged):
            same = kept.path == result.path and kept.revision == result.revision
            start = min(kept.start_line, result.start_line)
            end = max(kept.end_line, result.end_line)
            overlapping = same and overlaps(kept, result)
            touching = (
                same
                and result.start_line <= kept.end_line + 1
                and kept.start_line <= result.end_line + 1
                and (max_lines is None or end - start + 1 <= max_lines)
            )
            if overlapping or touching:
                merged[i] = _merge_two(kept, result)
                break
        else:
            merged.append(result)
    return merged


def _merge_two(a: Result, b: Result) -> Result:
    by_line = dict(enumerate(_lines(b), start=b.start_line))
    by_line.update(enumerate(_lines(a), start=a.start_line))
    start, end = min(a.start_line, b.start_line), max(a.end_line, b.end_line)
    text = "\n".join(by_line[n] for n in range(start, end + 1))
    if a.text.endswith("\n") and b.text.endswith("\n"):
        text += "\n"
    # Each line keeps the symbol of the chunk it came from (a's where they overlap, as its text).
    by_symbol = {n: b.symbol_at(n) for n in range(b.start_line, b.end_line + 1)}
    by_symbol.update((n, a.symbol_at(n)) for n in range(a.start_line, a.end_line + 1))
    return replace(
        _with_pieces(a, [(n, by_symbol[n]) for n in range(start, end + 1)]),
        start_line=start,
        end_line=end,
        text=text,
        content_hash=content_hash(text),
        start_byte=min(a.start_byte, b.start_byte),
        end_byte=max(a.end_byte, b.end_byte),
        defines=tuple(dict.fromkeys(a.defines + b.defines)),
        score=max(a.score, b.score),
        terms=a.terms if a.score >= b.score else b.terms,  # those of the score shown
        # both hold the findings of the lines they share
        untrusted=tuple(sorted(dict.fromkeys(a.untrusted + b.untrusted), key=lambda f: f.line)),
    )


def _with_pieces(result: Result, symbols: list[tuple[int, str | None]]) -> Result:
    """``result`` whose lines (number, symbol of its chunk) are ``symbols``: one piece per run
    of lines of one symbol, and as its own symbol what encloses them all."""
    pieces = tuple(
        (line, symbol)
        for i, (line, symbol) in enumerate(symbols)
        if i == 0 or symbol != symbols[i - 1][1]
    )
    if len(pieces) <= 1:
        return replace(result, symbol=pieces[0][1] if pieces else result.symbol, pieces=())
    return replace(result, symbol=enclosing_all([s for _, s in pieces]), pieces=pieces)


def line_range(result: Result, start: int, end: int) -> Result:
    """Lines ``start``..``end`` (true file line numbers, within the result) as a result of their
    own; byte offsets are those of the whole result (callers re-locate by content)."""
    lines = _lines(result)[start - result.start_line : end - result.start_line + 1]
    text = "\n".join(lines) + "\n"
    if result.pieces:
        result = _with_pieces(result, [(n, result.symbol_at(n)) for n in range(start, end + 1)])
    return replace(
        result,
        start_line=start,
        end_line=end,
        text=text,
        content_hash=content_hash(text),
        untrusted=findings_within(result.untrusted, start, end),
    )


def cut_to_terms(result: Result, terms: Iterable[str], max_lines: int = MAX_SOURCE_LINES) -> Result:
    """A source over ``max_lines`` lines cut to the window of ``max_lines`` holding the most
    question words (the earliest such window: a definition's signature comes first)."""
    lines = _lines(result)
    if len(lines) <= max_lines:
        return result
    wanted = set(terms)
    hits = [
        sum(1 for word in word_parts(line) if any(says(word, term) for term in wanted))
        for line in lines
    ]
    starts = range(len(lines) - max_lines + 1)
    best_at = max(starts, key=lambda at: (sum(hits[at : at + max_lines]), -at))
    start = result.start_line + best_at
    return line_range(result, start, start + max_lines - 1)


def select_sources(
    candidates: Sequence[Result],
    *,
    max_sources: int,
    token_budget: int,
    floor: float,
    asked: frozenset[str],
    terms: Iterable[str],
    headers_for: Callable[[Result], list[Result]],
) -> list[Result]:
    """The prompt's sources, best first: candidates clearing ``floor``, each with its
    definition's signature lines, merged with neighbours; at most ``max_sources`` merged sources
    and ``token_budget`` tokens, non-code sources limited to ``NON_CODE_QUOTA`` unless asked."""
    terms = list(terms)
    selected: list[Result] = []
    bodies: list[Result] = []  # the candidates chosen (not their signature lines)
    non_code = 0
    for result in candidates:
        if result.score < floor:
            continue
        kind = role(result.path, result.language)
        supporting = kind != "code" and kind not in asked
        if supporting and non_code >= NON_CODE_QUOTA:
            continue
        full = sum(1 for s in selected if any(overlaps(s, b) for b in bodies)) >= max_sources
        if full and not any(_touching(result, s) for s in selected):
            continue  # the cap is reached: only a neighbour of a kept source can still join
        heads = [h for h in headers_for(result) if not any(overlaps(h, s) for s in selected)]
        merged = merge_adjacent([*selected, *heads, result], MAX_SOURCE_LINES)
        trial = [cut_to_terms(source, terms) for source in merged]
        # a source of signature lines alone belongs to the source it introduces: not counted
        counted = sum(1 for s in merged if any(overlaps(s, b) for b in [*bodies, result]))
        if counted > max_sources:
            continue  # only a neighbour of a kept source can still join
        cost = sum(estimate_tokens(s.text) for s in trial)
        if cost > token_budget:
            continue  # too big for what is left (or for any prompt: a very long line)
        selected = merged
        bodies.append(result)
        non_code += supporting
    return [cut_to_terms(source, terms) for source in selected]
