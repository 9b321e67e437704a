"""Hover's and the follow-ups' retrieval, by name and by lines, not by ranking: a symbol's
definition then the code using it (``retrieve_for_symbol``), a file's lines
(``retrieve_lines``), and the lines calling a name (``callers``)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from ..core.records import Chunk, Result, content_hash, findings_within
from ..core.terms import (
    NOT_AFTER_WORD,
    NOT_BEFORE_WORD,
    assignment,
    is_test_path,
    whole_word,
    word_pattern,
)
from ..ingest.languages import is_code
from .question import Retrieval
from .selection import dedup_overlapping, merge_adjacent

if TYPE_CHECKING:
    from .retriever import Retriever

_DEFINITION_SEARCH = 400  # chunks naming a symbol looked through for its module-level value
_DEFINING = re.compile(r"\s*(?:export\s+)?(?:async\s+)?(?:def|function|fn|func|class)\b")
_CALL_CONTEXT = 2  # lines kept on each side of a call


def retrieve_for_symbol(
    retriever: Retriever,
    name: str,
    definition_path: str | None,
    limit: int,
    uses: bool,
    line: int | None,
) -> Retrieval:
    """Hover seeding: the chunk(s) defining ``name`` (in ``definition_path`` when given; first
    the one holding its ``line`` where it gives the name a value: a function's local), then
    (``uses``) the chunks calling it (the ``uses`` column), then other code naming it as a
    whole word (an import, a callback passed along): never docs or plain text."""
    last = name.rsplit(".", 1)[-1]
    if not last.strip():
        return Retrieval(selected=[], candidates=[], cleared_floor=False)
    store, depth = retriever.store, retriever.config.candidates

    # The chunker's queries find definitions; a module-level assignment is one too here
    # (`TIMEOUT = 30`, `var res = Object.create(...)`).
    assigned = assignment(last, top_level=True)

    def defines(chunk: Chunk) -> bool:
        # Code only: a README's example (`name := c.PostForm("name")`) defines nothing.
        return is_code(chunk.path) and (
            last in chunk.defines or assigned.search(chunk.text) is not None
        )

    local = store.chunks_for_path(definition_path) if definition_path else []
    given_here = assignment(last)
    here = [
        c
        for c in local
        if line is not None
        and c.start_line <= line <= c.end_line
        and (defines(c) or given_here.search(c.text))
    ]
    found = [c for c, _ in store.keyword_search(last, depth)]
    # Those the chunker's queries name, wherever the keyword search ranked them.
    named_there = store.naming([last], depth)
    definitions = here + [c for c in [*local, *found, *named_there] if defines(c)]
    if not definitions:
        # A module-level value used in many places (`TimeoutTypes = Union[...]`, imported
        # and annotated all over httpx) ranks below its uses: a wider look for its line.
        wider = store.keyword_search(last, _DEFINITION_SEARCH)
        definitions = [c for c, _ in wider if defines(c)]
    users = _callers(retriever, [last]) if uses else []
    named = [c for c in found if is_code(c.path) and whole_word(last, c.text)]
    others = [c for c in named if not defines(c)] if uses else []
    others.sort(key=_test_last)  # code before tests; stable
    ordered = [Result(c, 1.0) for c in definitions] + [Result(c, 0.5) for c in [*users, *others]]
    return _checked(retriever, dedup_overlapping(ordered)[:limit])


def retrieve_lines(retriever: Retriever, path: str, first: int, last: int) -> Retrieval:
    """The chunks of ``path`` holding its lines ``first``..``last`` (a hovered function's
    own), as they are on disk."""
    held = [
        Result(c, 1.0)
        for c in retriever.store.chunks_for_path(path)
        if c.start_line <= last and first <= c.end_line
    ]
    return _checked(retriever, sorted(held, key=lambda r: r.chunk.start_line))


def _checked(retriever: Retriever, results: list[Result]) -> Retrieval:
    """``results`` as the files hold them, neighbours merged for the prompt."""
    checked = retriever.checked(results)
    return Retrieval(
        selected=merge_adjacent(checked.kept),
        candidates=checked.kept,
        cleared_floor=bool(checked.kept),
        on_disk=checked,
    )


def callers(retriever: Retriever, names: list[str], limit: int) -> Retrieval:
    """The lines calling ``names`` (a few around each call), the first name's first: in the
    chunks whose ``uses`` hold one, then in those defining one (a small file is one chunk),
    code before tests. Where "where is that called?" after an answer about them looks: a
    call site, not the definition again."""
    windows: list[Result] = []
    for name in dict.fromkeys(n.rsplit(".", 1)[-1] for n in names if n.strip()):
        defining = retriever.store.naming([name], retriever.config.candidates)
        users = _callers(retriever, [name])
        calls = [w for chunk in [*users, *sorted(defining, key=_test_last)]
                 for w in _call_windows(chunk, name)]  # fmt: skip
        # Never called: where it is used at all (an import, a re-export, a reference) is the
        # answer, not unrelated code the question's other words happen to find.
        windows += calls or [
            w
            for chunk in users or _mentioning(retriever, name)
            for w in _call_windows(chunk, name, False)
        ]
    checked = retriever.checked(dedup_overlapping(windows)[:limit])
    found = checked.kept
    return Retrieval(selected=found, candidates=found, cleared_floor=bool(found), on_disk=checked)


def _mentioning(retriever: Retriever, name: str) -> list[Chunk]:
    """The chunks of the files the keyword search finds for ``name`` that say it (imports
    and references the ``uses`` column does not hold), code before tests."""
    store = retriever.store
    searched = retriever.search(name, limit=retriever.config.candidates)
    paths = dict.fromkeys(r.chunk.path for r in searched)
    said = word_pattern(name)
    found = [c for path in paths for c in store.chunks_for_path(path) if said.search(c.text)]
    return sorted(found, key=_test_last)


def _callers(retriever: Retriever, names: list[str]) -> list[Chunk]:
    found = retriever.store.naming(names, retriever.config.candidates, column="uses")
    return sorted(found, key=_test_last)  # code before tests; stable


def _test_last(chunk: Chunk) -> bool:
    return is_test_path(chunk.path)


def _call_windows(chunk: Chunk, name: str, calls: bool = True) -> list[Result]:
    """The lines of ``chunk`` around each call of ``name`` (with ``calls`` False: each mention of
    it), never its definition, as results holding exactly those lines of the file, adjacent
    windows joined."""
    after = r"\s*\(" if calls else NOT_BEFORE_WORD
    call = re.compile(rf"{NOT_AFTER_WORD}{re.escape(name)}{after}")
    lines = chunk.text.splitlines(keepends=True)
    spans: list[list[int]] = []
    for i, line in enumerate(lines):
        if call.search(line) and not _DEFINING.match(line):
            first, last = max(0, i - _CALL_CONTEXT), min(len(lines) - 1, i + _CALL_CONTEXT)
            if spans and first <= spans[-1][1] + 1:
                spans[-1][1] = last
            else:
                spans.append([first, last])
    found = []
    for first, last in spans:
        text = "".join(lines[first : last + 1])
        start_byte = chunk.start_byte + len("".join(lines[:first]).encode("utf-8"))
        found.append(
            Result(
                replace(
                    chunk,
                    start_line=chunk.start_line + first,
                    end_line=chunk.start_line + last,
                    content_hash=content_hash(text),
                    text=text,
                    start_byte=start_byte,
                    end_byte=start_byte + len(text.encode("utf-8")),
                    untrusted=findings_within(
                        chunk.untrusted, chunk.start_line + first, chunk.start_line + last
                    ),
                ),
                0.5,
            )
        )
    return found
