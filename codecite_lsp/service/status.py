"""One root's status: what is indexed, what is pending, what was skipped and why."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.responses import RootStatus
    from .upkeep import Upkeep

log = logging.getLogger("codecite_lsp")


def status(upkeep: Upkeep) -> RootStatus:
    """Counters only (it answers on the event loop); before this process's first pass, the
    index on disk."""
    from . import shaping  # pydantic: kept off the start-up path

    counts: dict[str, Any] = {}
    try:
        counts = dict(upkeep.indexer.status())  # before the first pass: what meta.json says
    except Exception as exc:  # a broken index must not hide the rest of the status
        log.warning("index status unavailable: %s", exc)
        counts = {"error": str(exc)}
    return shaping.status(
        upkeep.root,
        counts,
        indexing=upkeep.indexing,
        embedding=upkeep.config.embedding,
        skipped=upkeep.skipped,
        index_dir=upkeep.index_dir,
    )
