"""Score terms (pure): what each ranking rule added to (or took from) each chunk's score.

``search`` rewrites its scores rule by rule (:mod:`.retriever`); each rewrite goes through
:meth:`Ledger.step`, which keeps the difference it made per chunk under the rule's name. A
chunk's terms therefore add up to its score, and ``codecite search --explain`` shows why a
chunk ranked first without reading the code.
"""

from __future__ import annotations

from collections.abc import Mapping


class Ledger:
    def __init__(self) -> None:
        self._terms: dict[str, dict[str, float]] = {}

    def step(
        self, name: str, before: Mapping[str, float], after: dict[str, float]
    ) -> dict[str, float]:
        """Record ``after - before`` under ``name`` for every key (a key new in ``after``
        starts from 0); returns ``after``."""
        for key, value in after.items():
            delta = value - before.get(key, 0.0)
            if delta:
                terms = self._terms.setdefault(key, {})
                terms[name] = terms.get(name, 0.0) + delta
        return after

    def terms(self, key: str) -> tuple[tuple[str, float], ...]:
        return tuple(self._terms.get(key, {}).items())
