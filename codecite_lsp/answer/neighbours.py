"""Chunk-level evidence inside a file (pure): the chunks next to a file's best candidates.

A change, a bug or an explanation often spans neighbouring definitions: the helper above the
method that calls it, the lines between two pieces that both match. The keyword search scores
each chunk alone, so a chunk that holds none of the query's words but sits between (or right
beside) two strong candidates of its file never surfaces. Each strong candidate lends a share
of its score to the chunks on either side of it; a chunk flanked by two strong candidates gains
from both. A lent score stays below the lender's, so a file's first place, and with it the order
of files, does not change: only which chunks of a well-ranked file are shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..core.records import Chunk

# The share of a candidate's score lent to each chunk beside it.
NEIGHBOUR_SHARE = 0.45
# Lent scores stay under this fraction of the best lender's (the file's order is kept).
NEIGHBOUR_CAP = 0.9


def neighbour_scores(
    scores: Mapping[str, float], files: Mapping[str, Sequence[Chunk]]
) -> dict[str, float]:
    """Scores lent to the chunks beside the scored ones, keyed by chunk id: the chunks of
    ``files`` (each file's chunks in line order) that touch a scored chunk of that file. A chunk
    already scored higher than its loan is left out."""
    lent: dict[str, tuple[float, float]] = {}  # chunk id -> (sum of loans, best lender)
    for chunks in files.values():
        for i, chunk in enumerate(chunks):
            for j in (i - 1, i + 1):
                if not 0 <= j < len(chunks) or chunks[j].id not in scores:
                    continue
                lender = scores[chunks[j].id]
                total, best = lent.get(chunk.id, (0.0, 0.0))
                lent[chunk.id] = (total + NEIGHBOUR_SHARE * lender, max(best, lender))
    found = {}
    for key, (total, best) in lent.items():
        score = min(total, NEIGHBOUR_CAP * best)
        if score > scores.get(key, 0.0):
            found[key] = score
    return found
