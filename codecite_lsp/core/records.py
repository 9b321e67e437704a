"""Chunks and retrieval results: plain frozen dataclasses (they are made by the thousand), and
the hashes that key them. Answers and citations live in :mod:`.answers`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def content_hash(text: str) -> str:
    """sha256 of the text with line endings normalised, so CRLF checkouts hash like LF ones."""
    return hashlib.sha256(normalise_newlines(text).encode("utf-8")).hexdigest()


def file_revision(data: bytes) -> str:
    """Revision of a whole file: sha256 of its raw bytes."""
    return hashlib.sha256(data).hexdigest()


FindingKind = Literal[
    "addressed_to_ai",  # "note for AI assistants", "if you are an AI"
    "override",  # "ignore previous instructions", "you must say", "tell the user that"
    "role_marker",  # "System:", "Assistant:" opening a line
    "chat_token",  # the turn tokens of chat templates (im_start, INST, SYS)
    "fence_mimic",  # <<<END SOURCE ...>>>, "=== end of source ===", a "[S9] path:1-9" header
    "label_steering",  # "cite S9"
    "invisible",  # zero-width, bidi controls, tag characters
]


@dataclass(frozen=True, slots=True)
class Finding:
    """Text addressed to an AI reader (found by ``ingest.injection``): a record here because
    chunks, results and sources carry their findings from the index to the prompt."""

    kind: FindingKind
    line: int  # 1-based: within the scanned text, or a file line once a chunk carries it
    excerpt: str  # what matched, invisible characters spelled out (for the trace and the user)


def findings_within(found: tuple[Finding, ...], start: int, end: int) -> tuple[Finding, ...]:
    """The findings (at file lines) of a chunk's or result's lines ``start``..``end``: what a
    slice of it, or a merge of two, still carries."""
    return tuple(finding for finding in found if start <= finding.line <= end)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A syntax-bounded slice of one file: whole lines, never cut inside a line."""

    path: str  # repo-relative, "/" separators
    language: str
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    start_byte: int
    end_byte: int  # exclusive
    symbol: str | None  # symbol path, e.g. "AuthService.rotate_key"
    kind: str  # "function", "class", "method", "block", "heading", "paragraph", ...
    text: str  # exactly the file's lines start_line..end_line (decoded)
    content_hash: str
    revision: str  # revision of the whole file the chunk was cut from
    # Names whose definition starts in the chunk, and names it calls/instantiates (from the
    # tree-sitter queries; empty for prose): how retrieval follows the code.
    defines: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    # Text addressed to an AI reader, at file lines, found when the chunk was cut: the chunk is
    # shown to a model as untrusted data (ingest/injection.py).
    untrusted: tuple[Finding, ...] = ()

    def __reduce__(self) -> tuple[type[Chunk], tuple[object, ...]]:
        # Index workers send chunks by the thousand: positional fields pickle in a third less
        # time than the default slots state.
        return Chunk, tuple(getattr(self, name) for name in self.__slots__)

    @property
    def id(self) -> str:
        """Deterministic row key: re-running an ingest writes the same ids (idempotent)."""
        key = f"{self.path}\0{self.start_line}\0{self.content_hash}"
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


Pieces = tuple[tuple[int, str | None], ...]


class _Pieced:
    """What a retrieved text says of the definition holding each of its lines. A result merged
    from neighbouring chunks holds several (``ServeHTTP``, then ``handleHTTPRequest``): its
    ``symbol`` is only what encloses every line, and ``pieces`` says which lines are whose."""

    __slots__ = ()
    symbol: str | None
    pieces: Pieces

    def symbol_at(self, line: int) -> str | None:
        """The symbol of the chunk line ``line`` came from."""
        found = self.symbol
        for first, symbol in self.pieces:
            if first > line:
                break
            found = symbol
        return found

    def symbols_within(self, start: int, end: int) -> list[str]:
        """The symbols of the chunks lines ``start``..``end`` came from, in line order."""
        if not self.pieces:
            return [self.symbol] if self.symbol else []
        held = [s for first, s in self.pieces[1:] if start < first <= end]
        return [s for s in dict.fromkeys([self.symbol_at(start), *held]) if s]


def enclosing_all(symbols: list[str | None]) -> str | None:
    """The symbol that holds every one of ``symbols`` (``Flask`` for ``Flask.a`` and
    ``Flask.b``): their common dotted prefix; None when one is None or they share none."""
    if not symbols or any(s is None for s in symbols):
        return None
    parted = [s.split(".") for s in symbols if s is not None]
    common: list[str] = []
    for names in zip(*parted, strict=False):
        if len(set(names)) > 1:
            break
        common.append(names[0])
    return ".".join(common) or None


@dataclass(frozen=True, slots=True)
class Result(_Pieced):
    """One retrieved chunk (``core.responses.SearchResult`` is the contract's Result shape)."""

    path: str
    start_line: int
    end_line: int
    symbol: str | None
    score: float
    content_hash: str
    text: str
    language: str = ""
    kind: str = ""
    start_byte: int = 0
    end_byte: int = 0
    revision: str = ""
    # The chunk's own definitions (Chunk.defines): the question path weighs their names.
    defines: tuple[str, ...] = ()
    untrusted: tuple[Finding, ...] = ()  # the chunk's findings on these lines (Chunk.untrusted)

    # What made the score, by rule (name -> contribution, adding up to it): ``--explain``.
    terms: tuple[tuple[str, float], ...] = ()
    # Merged from neighbouring chunks: (first line, symbol) of each, in line order (_Pieced).
    pieces: Pieces = ()

    def to_json(self) -> dict[str, object]:
        """The wire fields (the contract's Result), for scripts that take results in process
        (the shared benchmark harnesses); the CLI and servers dump SearchResult the same way."""
        from .responses import SearchResult  # pydantic: only when asked

        return SearchResult.of(self).model_dump(mode="json")


@dataclass(frozen=True)
class Source(_Pieced):
    """One retrieved chunk as the model sees it; ``text`` is exactly lines start_line..end_line."""

    label: str
    path: str
    start_line: int
    end_line: int
    text: str
    symbol: str | None = None
    content_hash: str = ""
    revision: str = ""
    start_byte: int = 0
    # Findings at file lines as the index stored them; None: text the index never scanned (a
    # caller's own source), scanned when it is used (ingest.injection.source_findings).
    untrusted: tuple[Finding, ...] | None = None
    pieces: Pieces = ()  # as Result's: the symbol of each merged chunk's lines


def sources_from_results(results: list[Result]) -> list[Source]:
    """Label retrieved chunks S1, S2, ... in retrieval order."""
    return [
        Source(
            label=f"S{number}",
            path=r.path,
            start_line=r.start_line,
            end_line=r.end_line,
            text=r.text,
            symbol=r.symbol,
            pieces=r.pieces,
            content_hash=r.content_hash,
            revision=r.revision,
            start_byte=r.start_byte,
            untrusted=r.untrusted,
        )
        for number, r in enumerate(results, start=1)
    ]
