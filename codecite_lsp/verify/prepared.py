"""A request's sources prepared once (pure): their lines, normalised text and the findings of
text addressed to an AI reader; and what a claim's citations show of them (the evidence the
support rules read, support.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.records import Source
from ..ingest.injection import Finding, source_findings
from .envelope import ReplyCitation
from .quotes import declared_lines, normalise_ws
from .support import Evidence, enclosing_definition, enclosing_headers, reached

_EOL = re.compile(r"(\r\n|\r|\n)")


@dataclass
class Prepared:
    source: Source
    lines: list[str]
    normalised: str
    flags: tuple[Finding, ...] = ()  # text addressed to an AI reader (file lines): untrusted
    _byte_spans: list[tuple[int, int]] | None = None

    def byte_span(self, start_line: int, end_line: int) -> tuple[int, int]:
        """File byte offsets of the cited lines: start of the first, end of the last's content."""
        if self._byte_spans is None:
            spans, offset = [], self.source.result.chunk.start_byte
            pieces = _EOL.split(self.source.result.chunk.text)
            for index in range(0, len(pieces), 2):
                size = len(pieces[index].encode("utf-8"))
                spans.append((offset, offset + size))
                ending = pieces[index + 1] if index + 1 < len(pieces) else ""
                offset += size + len(ending)
            end = spans[-1][1]
            # Lines the text lacks (a declared empty last line) sit at its end.
            spans += [(end, end)] * (len(self.lines) - len(spans))
            self._byte_spans = spans
        first = start_line - self.source.result.chunk.start_line
        last = end_line - self.source.result.chunk.start_line
        return self._byte_spans[first][0], self._byte_spans[last][1]

    def cited(self, start_line: int, end_line: int) -> list[str]:
        first = self.source.result.chunk.start_line
        return self.lines[start_line - first : end_line - first + 1]


def prepare(sources: list[Source]) -> dict[str, Prepared]:
    prepared = {}
    for source in sources:
        lines = declared_lines(
            source.result.chunk.text,
            source.result.chunk.end_line - source.result.chunk.start_line + 1,
        )
        prepared[source.label] = Prepared(
            source, lines, normalise_ws("\n".join(lines)), source_findings(source)
        )
    return prepared


def known_lines(prepared: dict[str, Prepared], path: str) -> dict[int, str]:
    """The lines of ``path`` the request's sources hold, by number."""
    known: dict[int, str] = {}
    for entry in prepared.values():
        if entry.source.result.chunk.path == path:
            known.update(enumerate(entry.lines, start=entry.source.result.chunk.start_line))
    return known


def evidence(cites: list[ReplyCitation], prepared: dict[str, Prepared], question: str) -> Evidence:
    """What a claim's (narrowed) citations show: their quotes and lines, the cited sources'
    symbols, paths and enclosing definitions, the headers of the blocks the lines run in."""
    held: list[str] = []
    names: list[str] = []
    headers: list[str] = []
    numbers: set[int] = set()
    for cite in cites:
        numbers.update(range(cite.start_line, cite.end_line + 1))
        entry = prepared[cite.source]
        held += [cite.quote, *entry.cited(cite.start_line, cite.end_line)]
        known = known_lines(prepared, entry.source.result.chunk.path)
        symbols = entry.source.result.symbols_within(cite.start_line, cite.end_line)
        names += [
            *symbols,
            entry.source.result.chunk.path,
            enclosing_definition(known, cite.start_line),
        ]
        headers += enclosing_headers(known, cite.start_line)
    quotes = len({(cite.source, normalise_ws(cite.quote), cite.start_line) for cite in cites})
    return Evidence(
        "\n".join(held), "\n".join(names), frozenset(numbers), question, quotes, "\n".join(headers)
    )


def reached_citation(cite: ReplyCitation, entry: Prepared, terms: list[str]) -> ReplyCitation:
    """The citation grown to the lines next to it holding ``terms`` (support.reached)."""
    first = entry.source.result.chunk.start_line
    start, end = reached(entry.lines, first, cite.start_line, cite.end_line, cite.quote, terms)
    return cite.model_copy(update={"start_line": start, "end_line": end})
