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
    from pydantic import ValidationError  # pydantic: kept off the start-up path

    from . import shaping

    counts: dict[str, Any] = {}
    try:
        counts = dict(upkeep.indexer.status())  # before the first pass: what meta.json says
    except Exception as exc:  # a broken index must not hide the rest of the status
        log.warning("index status unavailable: %s", exc)
        counts = {"error": str(exc)}
    try:
        return _shaped(upkeep, counts)
    except ValidationError as exc:  # a hand-edited meta.json: counts that are not numbers
        log.warning("index status unreadable: %s", exc)
        return _shaped(upkeep, {"error": f"index status unreadable: {shaping.first_error(exc)}"})


def _shaped(upkeep: Upkeep, counts: dict[str, Any]) -> RootStatus:
    from . import shaping

    return shaping.status(
        upkeep.root,
        counts,
        indexing=upkeep.indexing,
        embedding=upkeep.config.embedding,
        skipped=upkeep.skipped,
        index_dir=upkeep.index_dir,
    )
