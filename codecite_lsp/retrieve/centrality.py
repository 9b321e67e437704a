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

import numpy as np

from ..core.references import References
from .weights import WEIGHTS

ITERATIONS = 50
TOLERANCE = 1e-9


def file_centrality(graph: References) -> dict[str, float]:
    """Each file that defines or uses a name -> its PageRank percentile in [0, 1] (1: the most
    central file; 0: no file ranks lower, as for every file nothing references). Files outside
    the graph (prose, data) are absent."""
    present = np.unique(np.concatenate([graph.defines[:, 0], graph.uses[:, 0]]))
    if not len(present):
        return {}
    order = sorted(graph.paths[int(f)] for f in present)
    rank_of = {path: i for i, path in enumerate(order)}
    index = np.full(len(graph.paths), -1, dtype=np.int64)
    index[present] = [rank_of[graph.paths[int(f)]] for f in present]
    sources, targets, weights = _edges(graph, index)
    ranks = _pagerank(len(order), sources, targets, weights)
    # Percentiles, not raw ranks: PageRank's mass is heavy-tailed, a prior must be bounded.
    # Equal ranks (files in symmetric places) get equal percentiles: rounding absorbs the power
    # iteration's last-digit noise.
    rounded = np.round(ranks / ranks.max(), 9)
    below = np.searchsorted(np.sort(rounded), rounded, side="left")
    scale = max(len(order) - 1, 1)
    return {path: float(below[i]) / scale for i, path in enumerate(order)}


def _edges(graph: References, index: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(user, definer, weight) per pair of files: each use of a name is an edge to each other
    file defining it, weighing sqrt(count) shared among them."""
    names = len(graph.names)
    by_name = np.argsort(graph.defines[:, 1], kind="stable")
    definer_files = graph.defines[by_name, 0]
    starts = np.searchsorted(graph.defines[by_name, 1], np.arange(names + 1))
    definers = np.diff(starts)
    users, used = graph.uses[:, 0], graph.uses[:, 1]
    defines_keys = graph.defines[:, 0] * names + graph.defines[:, 1]
    itself = np.isin(users * names + used, defines_keys)  # the user defines it too
    others = definers[used] - itself
    kept = (others > 0) & (others <= WEIGHTS.max_definers)
    users, used, share = users[kept], used[kept], np.sqrt(graph.counts[kept]) / others[kept]
    spread = definers[used]
    block = np.cumsum(spread) - spread
    at = np.arange(int(spread.sum())) - np.repeat(block, spread) + np.repeat(starts[used], spread)
    source = np.repeat(users, spread)
    target = definer_files[at]
    weight = np.repeat(share, spread)
    apart = source != target
    source, target, weight = index[source[apart]], index[target[apart]], weight[apart]
    size = max(int(index.max()) + 1, 1)
    keys, inverse = np.unique(source * size + target, return_inverse=True)
    summed = np.bincount(inverse.ravel(), weights=weight, minlength=len(keys))
    return keys // size, keys % size, summed


def central_weight(percentile: float | None) -> float:
    """A mild prior that only lifts (a first result keeps its 1.0): a file no other file
    references, or one outside the graph (prose, data), keeps its score; the most central file
    gains ``centrality_lift``."""
    return 1.0 + WEIGHTS.centrality_lift * (percentile or 0.0)


def _pagerank(
    size: int, sources: np.ndarray, targets: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """Power iteration; a file that references nothing spreads its rank evenly."""
    out = np.bincount(sources, weights=weights, minlength=size)
    share = weights / out[sources] if len(weights) else np.zeros(0)
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
