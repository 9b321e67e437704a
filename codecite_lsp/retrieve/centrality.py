"""A repository-level prior (pure): how central each file is in the reference graph.

As aider's repository map does, files are ranked by PageRank over the graph whose edges go from
a file that uses a name to the files that define it: code that much of the repository calls
(the request object, the router, the session) is more often what a question is about than a
leaf helper. A name defined in several files says little about which one is meant (``String``):
its edges share one unit of weight among its definitions, and past ``max_definers`` it has none.
A file's use of a name weighs the square root of its count, so one file calling a helper fifty
times does not make it the centre of the repository.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

from .weights import WEIGHTS

ITERATIONS = 50
TOLERANCE = 1e-9


def file_centrality(
    rows: Iterable[tuple[str, Sequence[str], Sequence[str]]],
) -> dict[str, float]:
    """Each file that defines or uses a name -> its PageRank percentile in [0, 1] (1: the most
    central file; 0: no file ranks lower, as for every file nothing references). ``rows`` are
    (path, defines, uses) per chunk. Files outside the graph (prose, data) are absent."""
    definers: dict[str, set[str]] = defaultdict(set)
    uses: dict[str, Counter[str]] = defaultdict(Counter)
    files: set[str] = set()
    for path, defined, used in rows:
        if defined or used:
            files.add(path)
        for name in defined:
            definers[name].add(path)
        uses[path].update(used)
    if not files:
        return {}
    order = sorted(files)
    index = {path: i for i, path in enumerate(order)}
    weights: dict[tuple[int, int], float] = defaultdict(float)
    for user, counted in uses.items():
        for name, count in counted.items():
            targets = definers.get(name, set()) - {user}
            if len(targets) > WEIGHTS.max_definers:
                continue  # `get`, `run`, `__init__`: no hint which definition is meant
            for target in targets:
                weights[index[user], index[target]] += math.sqrt(count) / len(targets)
    ranks = _pagerank(len(order), weights)
    # Percentiles, not raw ranks: PageRank's mass is heavy-tailed, a prior must be bounded.
    # Equal ranks (files in symmetric places) get equal percentiles: rounding absorbs the power
    # iteration's last-digit noise.
    rounded = np.round(ranks / ranks.max(), 9)
    below = np.searchsorted(np.sort(rounded), rounded, side="left")
    scale = max(len(order) - 1, 1)
    return {path: float(below[i]) / scale for i, path in enumerate(order)}


def central_weight(percentile: float | None) -> float:
    """A mild prior that only lifts (a first result keeps its 1.0): a file no other file
    references, or one outside the graph (prose, data), keeps its score; the most central file
    gains ``centrality_lift``."""
    return 1.0 + WEIGHTS.centrality_lift * (percentile or 0.0)


def _pagerank(size: int, weights: dict[tuple[int, int], float]) -> np.ndarray:
    """Power iteration; a file that references nothing spreads its rank evenly."""
    out = np.zeros(size)
    for (source, _), weight in weights.items():
        out[source] += weight
    sources = np.array([s for s, _ in weights], dtype=np.int64)
    targets = np.array([t for _, t in weights], dtype=np.int64)
    share = np.array(list(weights.values())) / out[sources] if weights else np.zeros(0)
    rank = np.full(size, 1.0 / size)
    dangling = out == 0
    for _ in range(ITERATIONS):
        spread = np.bincount(targets, weights=rank[sources] * share, minlength=size)
        damping = WEIGHTS.damping
        new = (1 - damping) / size + damping * (spread + rank[dangling].sum() / size)
        if np.abs(new - rank).sum() < TOLERANCE:
            return new
        rank = new
    return rank
