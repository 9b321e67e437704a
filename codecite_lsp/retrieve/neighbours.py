"""Chunk-level evidence inside a file (pure): the chunks next to a file's best candidates.

A change, a bug or an explanation often spans neighbouring definitions: the helper above the
method that calls it, the lines between two pieces that both match. The keyword search scores
each chunk alone, so a chunk that holds none of the query's words but sits between (or right
beside) two strong candidates of its file never surfaces. Each strong candidate lends a share
of its score to the chunks on either side of it; a chunk flanked by two strong candidates gains
from both. A lent score stays below the lender's, so a file's first place, and with it the order
of files, does not change: only which chunks of a well-ranked file are shown.

In a list a person reads, one file's many near-equal chunks should not crowd out the next
file's best: each further chunk of a file is scaled down once more (``spread_over_files``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..core.records import Chunk
from .weights import WEIGHTS


def neighbour_scores(
    lenders: Mapping[str, tuple[Chunk, float]], found: Iterable[Chunk]
) -> dict[str, float]:
    """Scores lent to the ``found`` chunks that touch a lender of their file (a lender: chunk id
    -> (chunk, score)), keyed by chunk id. A chunk already scored higher than its loan, a
    lender included, is left out."""
    lent: dict[str, float] = {}
    for chunk in found:
        loans = [
            score
            for lender, score in lenders.values()
            if lender.path == chunk.path
            and (lender.end_line + 1 == chunk.start_line or chunk.end_line + 1 == lender.start_line)
        ]
        if not loans:
            continue
        score = min(WEIGHTS.neighbour_share * sum(loans), WEIGHTS.neighbour_cap * max(loans))
        own = lenders[chunk.id][1] if chunk.id in lenders else 0.0
        if score > own:
            lent[chunk.id] = max(score, lent.get(chunk.id, 0.0))
    return lent


def spread_over_files(scores: dict[str, float], chunks: dict[str, Chunk]) -> dict[str, float]:
    """Each further chunk of a file counts a little less (``file_repeat`` per chunk of that file
    ranked above it): one file's many near-equal chunks do not crowd out the next file's best.
    A file's best chunk keeps its score, so the order of files does not change."""
    seen: dict[str, int] = {}
    spread = {}
    for key in sorted(scores, key=lambda key: (-scores[key], key)):
        path = chunks[key].path
        spread[key] = scores[key] * WEIGHTS.file_repeat ** seen.get(path, 0)
        seen[path] = seen.get(path, 0) + 1
    return spread
