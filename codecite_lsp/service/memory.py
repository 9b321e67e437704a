"""The service's name for :func:`..core.memory.release` (the index's in-memory view uses it too)."""

from ..core.memory import release

__all__ = ["release"]
