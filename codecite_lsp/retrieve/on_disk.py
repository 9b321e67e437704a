"""What retrieval hands on is what the files hold now.

The index is trusted to say where to look, never what the lines say: a result whose lines differ
from its file's (the file changed since the pass that indexed it and no pass has run since, an
index folder edited or shipped with a checkout, a base built from other contents) is left out,
so it is neither shown as a search result nor quoted in an answer, where the gate would verify a
quote against text the file does not hold. ``holds`` is pure; ``on_disk`` reads each file once,
as the indexer reads it (never a secret-named file, nor one through a link out of the repository).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core import wording
from ..core.config import Config
from ..core.records import Chunk, Result
from ..ingest.scan import current_text

log = logging.getLogger(__name__)


def _lines(text: str) -> list[str]:
    """Lines as the chunker counts them (a line ends at "\\n"; a CRLF's "\\r" is not text)."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def holds(file_text: str, chunk: Chunk) -> bool:
    """Whether lines ``start_line..end_line`` of ``file_text`` are exactly the chunk's text."""
    wanted = _lines(chunk.text)
    if len(wanted) > 1 and wanted[-1] == "":
        wanted.pop()  # the text's final newline
    if len(wanted) != chunk.end_line - chunk.start_line + 1 or chunk.start_line < 1:
        return False
    start = chunk.start_line - 1
    return _lines(file_text)[start : start + len(wanted)] == wanted


@dataclass(frozen=True)
class OnDisk:
    """Results checked against the working tree."""

    kept: list[Result]  # their files hold their lines, in order
    left: list[Result]  # their files do not (changed, gone, or no longer indexable)
    # Some file the index holds other text for is the very revision it was indexed at: the
    # index folder was edited or copied from elsewhere, and no index pass will correct it.
    forged: bool = False


def on_disk(repo: Path, config: Config, results: Sequence[Result]) -> OnDisk:
    """The results split by whether the working tree's files still hold their lines; what was
    left out is logged."""
    files: dict[str, tuple[str, str] | None] = {}
    kept: list[Result] = []
    left: list[Result] = []
    forged = False
    for result in results:
        chunk = result.chunk
        if chunk.path not in files:
            files[chunk.path] = current_text(repo, chunk.path, config)
        found = files[chunk.path]
        if found is not None and holds(found[0], chunk):
            kept.append(result)
            continue
        left.append(result)
        forged = forged or (found is not None and found[1] == chunk.revision)
    if left:
        log.warning(
            "left out %d retrieved places whose files do not hold their indexed text%s: %s",
            len(left),
            " (unchanged since indexed: the index itself is wrong)" if forged else "",
            ", ".join(f"{r.chunk.path}:{r.chunk.start_line}-{r.chunk.end_line}" for r in left[:5]),
        )
    return OnDisk(kept, left, forged)


def index_differs(checked: OnDisk) -> str:
    """Why nothing is quoted: no file holds what the index says of the places retrieval chose."""
    places = ", ".join(
        f"{r.chunk.path}:{r.chunk.start_line}-{r.chunk.end_line}" for r in checked.left[:3]
    )
    said = wording.INDEX_FORGED if checked.forged else wording.INDEX_DIFFERS
    return said.format(places=places)
