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
class Result:
    """One retrieved chunk and its score (``core.responses.SearchResult`` is the contract's
    Result shape). A result merged from neighbouring chunks holds a chunk of its own (their
    lines, text and bytes; ``retrieve.selection``) and ``pieces``."""

    chunk: Chunk
    score: float
    # What made the score, by rule (name -> contribution, adding up to it): ``--explain``.
    terms: tuple[tuple[str, float], ...] = ()
    # Merged from neighbouring chunks that hold several definitions (``ServeHTTP``, then
    # ``handleHTTPRequest``): (first line, symbol) of each, in line order; the chunk's
    # ``symbol`` is then only what encloses every line.
    pieces: Pieces = ()

    # What scripts taking results in process read (the shared benchmark harnesses call
    # ``r.to_json()["path"]``, ``r.start_line``, ``r.end_line``: docs/contracts.md).
    @property
    def start_line(self) -> int:
        return self.chunk.start_line

    @property
    def end_line(self) -> int:
        return self.chunk.end_line

    def to_json(self) -> dict[str, object]:
        """The contract's Result fields (``core.responses.result_json``)."""
        from .responses import result_json  # responses imports this module

        return result_json(self)

    def symbol_at(self, line: int) -> str | None:
        """The symbol of the chunk line ``line`` came from."""
        found = self.chunk.symbol
        for first, symbol in self.pieces:
            if first > line:
                break
            found = symbol
        return found

    def symbols_within(self, start: int, end: int) -> list[str]:
        """The symbols of the chunks lines ``start``..``end`` came from, in line order."""
        if not self.pieces:
            return [self.chunk.symbol] if self.chunk.symbol else []
        held = [s for first, s in self.pieces[1:] if start < first <= end]
        return [s for s in dict.fromkeys([self.symbol_at(start), *held]) if s]


@dataclass(frozen=True, slots=True)
class Source:
    """One retrieved result as the model sees it, under its label (``S1``); the chunk's
    ``text`` is exactly lines start_line..end_line."""

    result: Result
    label: str
    # False: a caller's own text the index never scanned (api.gate, fixtures), so its chunk
    # carries no findings and they are found when it is used (ingest.injection.source_findings).
    # A flag rather than a second ``untrusted`` field: the chunk stays the one place for them.
    scanned: bool = True


def sources_from_results(results: list[Result]) -> list[Source]:
    """Label retrieved chunks S1, S2, ... in retrieval order."""
    return [Source(result, f"S{number}") for number, result in enumerate(results, start=1)]


def placed_chunk(
    path: str,
    start_line: int,
    end_line: int,
    text: str,
    *,
    symbol: str | None = None,
    content_hash: str = "",
    revision: str = "",
    start_byte: int = 0,
    defines: tuple[str, ...] = (),
) -> Chunk:
    """A chunk known by its place and text alone (no language, kind or end byte): a caller's
    own text, a fixture."""
    return Chunk(
        path=path,
        language="",
        start_line=start_line,
        end_line=end_line,
        start_byte=start_byte,
        end_byte=0,
        symbol=symbol,
        kind="",
        text=text,
        content_hash=content_hash,
        revision=revision,
        defines=defines,
    )


def outside_source(
    label: str,
    path: str,
    start_line: int,
    end_line: int,
    text: str,
    symbol: str | None = None,
    content_hash: str = "",
    revision: str = "",
    start_byte: int = 0,
) -> Source:
    """A source of a caller's own text (api.gate's dicts, the replay fixtures): not retrieved
    (score 0) and never scanned by the index."""
    chunk = placed_chunk(
        path,
        start_line,
        end_line,
        text,
        symbol=symbol,
        content_hash=content_hash,
        revision=revision,
        start_byte=start_byte,
    )
    return Source(Result(chunk, 0.0), label, scanned=False)


def source_fields(source: Source) -> dict[str, object]:
    """The fields :func:`outside_source` takes back: how snapshots store a source."""
    chunk = source.result.chunk
    return {
        "label": source.label,
        "path": chunk.path,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "text": chunk.text,
        "symbol": chunk.symbol,
        "content_hash": chunk.content_hash,
        "revision": chunk.revision,
        "start_byte": chunk.start_byte,
    }
