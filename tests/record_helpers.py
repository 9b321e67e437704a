"""Retrieval results for tests that need one by its place alone (path, lines, text)."""

from __future__ import annotations

from codecite_lsp.core.records import Result, placed_chunk


def result(
    path: str,
    start: int,
    end: int,
    text: str,
    score: float = 1.0,
    *,
    symbol: str | None = None,
    content_hash: str = "h",
    revision: str = "",
    start_byte: int = 0,
    defines: tuple[str, ...] = (),
) -> Result:
    """A result of a chunk of lines ``start``..``end`` of ``path`` holding ``text``."""
    chunk = placed_chunk(
        path,
        start,
        end,
        text,
        symbol=symbol,
        content_hash=content_hash,
        revision=revision,
        start_byte=start_byte,
        defines=defines,
    )
    return Result(chunk, score)
