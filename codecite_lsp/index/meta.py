"""``meta.json``: what an index folder records about itself (layout version, embedder, budgets,
counts at the last pass), as a part of :class:`~.store.Store`.

Read without opening the tables (importing lancedb costs seconds; an editor's status must be right
at once), written atomically, and never trusted when unreadable: the index is rebuilt instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core.files import read_regular
from ..ingest.injection import RULES_VERSION

# 2: chunks carry defines/uses (retrieval follows the code); 3: chunks carry the text in them
# addressed to an AI reader (``untrusted``); 4: the words in chunks' fields are stemmed so that
# 'entry' and 'entries' meet (core/terms.py)
SCHEMA_VERSION = 4


@dataclass
class Meta:
    schema_version: int = SCHEMA_VERSION
    embedder: str | None = None
    dim: int | None = None
    chunk_budget: int | None = None  # the budget of the last complete index pass
    cold_budget: int | None = None  # the budget a first (cold) pass started writing with
    last_update: str | None = None  # ISO time of the last finished write
    # Counts at the last finished pass: what status reports after a restart, before the store
    # is opened (importing lancedb costs seconds; an editor's status must be right at once).
    files: int | None = None
    chunks: int | None = None
    optimized_version: int = 0  # chunks table version at the last optimize()
    # The rules the chunks' ``untrusted`` findings were found with (ingest/injection.py).
    injection_rules: int = RULES_VERSION

    @property
    def current(self) -> bool:
        """Whether the index was written in this layout, its chunks scanned under these rules:
        any other is rebuilt, never misread."""
        return self.schema_version == SCHEMA_VERSION and self.injection_rules == RULES_VERSION


class MetaFile:
    """The ``meta.json`` of one index folder."""

    def __init__(self, index_dir: Path) -> None:
        self.path = index_dir / "meta.json"

    def exists(self) -> bool:
        return self.path.exists()

    def read(self) -> Meta:
        """The saved meta; a default one if there is none yet, ``schema_version`` -1 if it is
        unreadable (rebuild rather than trust it)."""
        try:
            raw = json.loads(read_regular(self.path)[0].decode("utf-8"))
        except FileNotFoundError:
            return Meta()
        except (OSError, ValueError):
            return Meta(schema_version=-1)
        if not isinstance(raw, dict):
            return Meta(schema_version=-1)
        known = {k: v for k, v in raw.items() if k in Meta.__dataclass_fields__}
        if not all(_well_typed(k, v) for k, v in known.items()):
            return Meta(schema_version=-1)  # e.g. {"optimized_version": "x"}: rebuild
        return Meta(**known)

    def save(self, meta: Meta) -> None:
        """Write atomically (temp file + rename): a crash never leaves half a meta.json."""
        text = json.dumps(asdict(meta), indent=2)
        with contextlib.suppress(OSError, ValueError):  # missing, or damaged: rewritten below
            if read_regular(self.path)[0].decode("utf-8") == text:
                return  # an unchanged index stays byte-for-byte unchanged
        temp = self.path.with_suffix(f".tmp{os.getpid()}.{threading.get_ident()}")
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, self.path)


_META_TEXT = frozenset({"embedder", "last_update"})
_META_REQUIRED = frozenset({"schema_version", "optimized_version", "injection_rules"})


def _well_typed(name: str, value: Any) -> bool:
    if value is None:
        return name not in _META_REQUIRED
    if name in _META_TEXT:
        return isinstance(value, str)
    return isinstance(value, int) and not isinstance(value, bool)
