"""The tool loop's tools for one root (answer/tool_loop.py): search, read, definition and
callers over the same index, privacy and secret rules as every other door. A read goes through
:meth:`.privacy.Privacy.read` as an agent's does (outside the workspace, a secret, ignored or
credential-holding file: refused, and the refusal is the tool's result); what the index returns
is left out when its file became private.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..core.records import Chunk, Result, content_hash
from .search import visible_results

if TYPE_CHECKING:
    from ..retrieve.retriever import Retriever
    from .privacy import Privacy


class ToolParts(Protocol):
    """What the tools use of a Session."""

    @property
    def retriever(self) -> Retriever: ...

    def privacy(self) -> Privacy: ...


class RootTools:
    """The tools of one request (its privacy rules read once, at its start)."""

    def __init__(self, parts: ToolParts) -> None:
        self.parts = parts
        self.rules = parts.privacy()

    def _visible(self, results: list[Result]) -> list[Result]:
        return [r for r in results if self.rules.path_refusal(r.chunk.path) is None]

    def search(self, query: str) -> list[Result]:
        return visible_results(self.parts.retriever, self.rules, query, limit=10)

    def definition(self, symbol: str) -> list[Result]:
        found = self.parts.retriever.retrieve_for_symbol(symbol, uses=False)
        return self._visible(found.selected)

    def callers(self, symbol: str) -> list[Result]:
        return self._visible(self.parts.retriever.callers([symbol]).selected)

    def read(self, path: str, start_line: int, end_line: int) -> list[Result]:
        from ..answer.tool_loop import MAX_READ_LINES, ToolRefused
        from ..ingest.injection import at_lines
        from ..ingest.lines import Lines
        from .privacy import Missing, Unreadable

        try:
            source = self.rules.read(path)
        except (Unreadable, Missing) as exc:
            raise ToolRefused(str(exc)) from None
        lines = Lines(source.text)
        if lines.count == 0:
            return []
        first = min(max(1, start_line), lines.count)
        last = min(max(first, end_line), lines.count, first + MAX_READ_LINES - 1)
        text = lines.text(first - 1, last)  # whole lines, as a chunk holds them
        chunk = Chunk(
            path=source.path,
            language="",
            start_line=first,
            end_line=last,
            start_byte=lines.byte_starts[first - 1],
            end_byte=lines.byte_starts[last],
            symbol=None,
            kind="lines",
            text=text,
            content_hash=content_hash(text),
            revision=source.revision,
            untrusted=at_lines(text, first),  # planted text is marked as in any source
        )
        return [Result(chunk, 0.0, pieces=self._symbols(chunk))]

    def _symbols(self, read: Chunk) -> tuple[tuple[int, str], ...]:
        """(first line, symbol) of the indexed definitions the read lines run through, in line
        order, when the file is as indexed: a claim may name the function whose lines it read
        (the gate lets a chunk's symbol be named); none once the file changed (its lines moved)."""
        indexed = self.parts.retriever.store.chunks_for_path(read.path)
        held = [
            c
            for c in indexed
            if c.revision == read.revision and c.symbol
            and c.start_line <= read.end_line and c.end_line >= read.start_line
        ]  # fmt: skip
        ordered = sorted(held, key=lambda c: c.start_line)
        return tuple((max(c.start_line, read.start_line), str(c.symbol)) for c in ordered)
