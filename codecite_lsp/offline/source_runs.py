"""Sources read as runs of lines for the offline answerer: which lines define a name (the
chunker's tree-sitter queries, definitions.py, run in the parse worker: ingest/readback.py), which
explain (comments, docstrings, prose), which do the work (statements in a function's body), which
question terms each says, and what a window of lines is about.

Sources that are adjacent pieces of one file are read as one run of lines, so a signature and its
docstring split across two chunks still make one window.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ..core.records import Source
from ..core.terms import says, word_parts
from ..ingest.readback import read_isolated
from ..verify.quotes import declared_lines
from .definitions import CALLABLE_KINDS, Defined, definitions

HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
COMMENT = re.compile(r'^\s*(?:"""|\'\'\'|#(?![!\[])|//|/\*|\*(?!\*)|--|<!--)')
COMMENT_MARKS = re.compile(
    r'^\s*(?:"""|\'\'\'|/\*\*?|\*/|\*|//+|#+|--|<!--)\s*|\s*(?:"""|\'\'\'|\*/|-->)\s*$'
)
PROSE_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc")


def terms_said(words: list[str], query: frozenset[str]) -> list[str]:
    """The question terms ``words`` say, one per word that says one, in order."""
    return [term for word in words for term in query if says(word, term)]


def doc_sentence(line: str, query: frozenset[str] = frozenset()) -> str:
    """The explaining text of a comment/docstring line: markers stripped, the sentence sharing
    most terms with the question (the first one on a tie)."""
    text = COMMENT_MARKS.sub("", line.strip()).strip()
    sentences = re.split(r"(?<=\.)\s+", text)
    sentence = max(sentences, key=lambda one: len(set(terms_said(word_parts(one), query))))
    return sentence if len(sentence) <= 140 else sentence[:137].rstrip() + "..."


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


@dataclass(frozen=True)
class Subject:
    name: str | None  # defined in the window or just above it
    defined_here: bool  # the definition line of ``name`` is one of the window's lines
    enclosing: str | None  # else the definition (or chunk symbol) the window sits inside
    doc: str | None  # an explaining sentence of the window
    qualified: str | None = None  # ``name`` or ``enclosing`` with its parents: `Class.method`


@dataclass
class Run:
    """Consecutive lines of one file, from one source or several adjacent ones, with what the
    scorer needs to know about each line."""

    path: str
    first_line: int
    lines: list[str]
    owners: list[Source]  # the source each line is quoted from
    ranks: list[int]  # that source's position in the request (retrieval rank)
    terms: list[set[str]]
    line_terms: list[list[str]]  # with repeats, in order
    is_def: list[bool]  # a definition's signature lines (decorators included), a prose heading
    is_doc: list[bool]
    defined: list[Defined]  # the run's definitions, as indexes into ``lines``

    def defined_at(self, index: int) -> Defined | None:
        """The definition whose signature line ``index`` is (the innermost one)."""
        found = [d for d in self.defined if d.head <= index <= d.signature_end]
        return found[-1] if found else None

    def qualified(self, definition: Defined) -> str:
        """``Parent.name``: its parents in the run, else the chunk's symbol when that is the
        definition's own."""
        parent = self.body_of(definition.head)
        if parent is not None:
            return f"{self.qualified(parent)}.{definition.name}"
        symbol = self.symbol_at(definition.head)
        return symbol if symbol and symbol.endswith(f".{definition.name}") else definition.name

    def body_of(self, index: int) -> Defined | None:
        """The innermost definition whose body holds line ``index``."""
        inside = [d for d in self.defined if d.encloses(index)]
        return inside[-1] if inside else None

    def symbol_at(self, index: int) -> str | None:
        """The symbol of the chunk line ``index`` was retrieved in."""
        return self.owners[index].result.symbol_at(self.number(index))

    def within(self, index: int) -> str | None:
        """The qualified name of the definition holding line ``index``: the innermost one in the
        run whose body holds it, else the chunk's (None for a top-level line)."""
        owner = self.body_of(index)
        return self.qualified(owner) if owner is not None else self._enclosing(index)

    def does(self, index: int) -> bool:
        """Line ``index`` is a statement doing the work: code in a function's body, not a
        signature, a comment or docstring, or a field declared in a class."""
        owner = self.body_of(index)
        return (
            owner is not None
            and owner.kind in CALLABLE_KINDS
            and not self.is_def[index]
            and not self.is_doc[index]
            and bool(self.lines[index].strip())
        )

    @classmethod
    def of(cls, laid: _Laid, defined: list[Defined]) -> Run:
        """The run of ``laid``, whose lines define ``defined``."""
        lines, prose = laid.lines, laid.prose
        is_doc, in_docstring = [], False
        for line in lines:
            is_doc.append(
                bool(line.strip()) and (prose or in_docstring or bool(COMMENT.match(line)))
            )
            if (line.count('"""') + line.count("'''")) % 2:
                in_docstring = not in_docstring
        is_def = [prose and bool(HEADING.match(line)) for line in lines]
        for definition in defined:
            for index in range(definition.head, definition.signature_end + 1):
                is_def[index] = True
        line_terms = [word_parts(line) for line in lines]
        return cls(
            path=laid.path,
            first_line=laid.first_line,
            lines=lines,
            owners=laid.owners,
            ranks=laid.ranks,
            terms=[set(found) for found in line_terms],
            line_terms=line_terms,
            is_def=is_def,
            is_doc=is_doc,
            defined=defined,
        )

    def number(self, index: int) -> int:
        return self.first_line + index

    def citations(self, first: int, last: int) -> list[dict[str, Any]]:
        """Lines first..last quoted verbatim, one citation per source they come from."""
        found = []
        start = first
        while start <= last:
            end = start
            while end < last and self.owners[end + 1] is self.owners[start]:
                end += 1
            quote = "\n".join(self.lines[start : end + 1])
            if quote.strip():
                found.append(
                    {
                        "source": self.owners[start].label,
                        "start_line": self.number(start),
                        "end_line": self.number(end),
                        "quote": quote,
                    }
                )
            start = end + 1
        return found

    def subject(self, first: int, last: int, query: frozenset[str]) -> Subject:
        # The definition inside the window, else the nearest one just above it that goes on
        # into the window (a docstring under its signature), not one that ended above it.
        order = [*range(first, last + 1), *range(first - 1, max(-1, first - 3), -1)]
        name_at = next(
            (i for i in order if (d := self.defined_at(i)) and (i >= first or d.end >= first)),
            None,
        )
        definition = self.defined_at(name_at) if name_at is not None else None
        name = definition.name if definition else None
        enclosing = None if definition else self._enclosing(first)
        qualified = self.qualified(definition) if definition is not None else self.within(first)
        defined_here = name_at is not None and first <= name_at <= last
        # The window's explaining lines read as one text (a sentence may span lines). Only the
        # window's own: a claim says what its quote shows, and the gate removes a docstring
        # sentence whose lines were not quoted.
        inside = " ".join(
            COMMENT_MARKS.sub("", self.lines[i].strip()).strip()
            for i in range(first, last + 1)
            if self.is_doc[i]
        )
        doc = doc_sentence(inside, query) if inside.strip() else None
        return Subject(name, defined_here, enclosing, doc, qualified)

    def _enclosing(self, at: int) -> str | None:
        """Name of the innermost definition whose body holds line ``at``; else the chunk's
        symbol when the run starts inside a definition; None at the top level."""
        owner = self.body_of(at)
        if owner is not None:
            return owner.name
        # A top-level line (an import, ``__all__``) is outside every definition: the chunk's
        # symbol names its first definition further down, and "In `that`" would be false.
        if not _indent(self.lines[at]) and not self.path.lower().endswith(PROSE_SUFFIXES):
            return None
        return self.symbol_at(at)


@dataclass(frozen=True)
class _Laid:
    """The lines of one run, each from the best-ranked source holding it."""

    path: str
    first_line: int
    lines: list[str]
    owners: list[Source]
    ranks: list[int]

    @property
    def prose(self) -> bool:
        return self.path.lower().endswith(PROSE_SUFFIXES)

    @classmethod
    def of(cls, ranked: list[tuple[int, Source]]) -> _Laid:
        first_line = min(source.result.chunk.start_line for _, source in ranked)
        last_line = max(source.result.chunk.end_line for _, source in ranked)
        size = last_line - first_line + 1
        lines = [""] * size
        owners: list[Source | None] = [None] * size
        ranks = [0] * size
        for rank, source in sorted(ranked, key=lambda item: item[0]):  # best-ranked source wins
            chunk = source.result.chunk
            count = chunk.end_line - chunk.start_line + 1
            for offset, text in enumerate(declared_lines(chunk.text, count)):
                at = chunk.start_line - first_line + offset
                if owners[at] is None:
                    lines[at], owners[at], ranks[at] = text, source, rank
        held = [owner for owner in owners if owner is not None]  # runs have no holes
        return cls(ranked[0][1].result.chunk.path, first_line, lines, held, ranks)


def read_runs(sources: list[Source]) -> list[Run]:
    """Sources grouped into runs: same path, overlapping or adjacent lines. The definitions of
    every run are parsed in one round trip to the parse worker."""
    by_path: dict[str, list[tuple[int, Source]]] = defaultdict(list)
    for rank, source in enumerate(sources):
        chunk = source.result.chunk
        if chunk.end_line >= chunk.start_line:
            by_path[chunk.path].append((rank, source))
    laid: list[_Laid] = []
    for ranked in by_path.values():
        ranked.sort(key=lambda item: (item[1].result.chunk.start_line, item[0]))
        current: list[tuple[int, Source]] = []
        reach = 0  # the last line the current run covers
        for item in ranked:
            chunk = item[1].result.chunk
            if current and chunk.start_line > reach + 1:
                laid.append(_Laid.of(current))
                current = []
            reach = max(reach, chunk.end_line) if current else chunk.end_line
            current.append(item)
        laid.append(_Laid.of(current))
    code = [run for run in laid if not run.prose]
    found = read_isolated(definitions, [(run.path, "\n".join(run.lines)) for run in code])
    defined = {id(run): each for run, each in zip(code, found, strict=True)}
    return [Run.of(run, defined.get(id(run), [])) for run in laid]
