"""Everything one workspace root needs, without any LSP in it: the configuration and the parts
built from it (the index's upkeep, retriever, answerer, privacy rules, hover cache), rebuilt when
settings change and closed with the root.

The work is elsewhere, one module each, taking the parts it needs: upkeep.py keeps the index
current, ask.py, search.py, citations.py and status.py answer the requests the features (and
the MCP server) make from worker threads. Heavy parts (lancedb via the indexer/retriever, litellm
via the answerer) are built lazily on first use, so creating a Session costs only reading the
config files.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.config import load_config_lenient
from . import logfile
from .upkeep import Upkeep

if TYPE_CHECKING:
    from ..answer.pipeline import Answerer
    from ..retrieve.retriever import Retriever
    from .privacy import Privacy

# Settings whose change invalidates what is on disk: the index must be rebuilt or re-opened
# (trust decides whether .codeciteignore brings git-ignored files in).
_INDEX_KEYS = (
    "index_dir", "embedding", "chunk_budget", "max_file_bytes", "max_line_length",
    "repository_trusted", "base",
)  # fmt: skip


class Session:
    def __init__(self, root: Path, settings: Mapping[str, Any]) -> None:
        self.root = root
        self.config, self.problems = load_config_lenient(root, settings)
        self.index_dir = self.config.resolved_index_dir(root)
        self._lazy = threading.RLock()  # builds the heavy parts once
        self._retriever: Retriever | None = None
        self._answerer: Answerer | None = None
        # Hover markdown by (symbol, hovered file, chunk around the hovered line, hashes of
        # the chunks it was explained from, link kind): cleared on change.
        self.hovers: dict[tuple[str, str, str, tuple[str, ...], bool], str | None] = {}
        self.upkeep = Upkeep(root, self.config, self.index_dir, changed=self.hovers.clear)
        self._log_file = logfile.attach(self.index_dir)

    # -- heavy parts, built on first use ----------------------------------------------------

    @property
    def retriever(self) -> Retriever:
        with self._lazy:
            if self._retriever is None:
                from ..retrieve.retriever import open_retriever

                # the server answers many queries: from the index's in-memory view
                self._retriever = open_retriever(self.root, self.config, in_memory=True)
            return self._retriever

    @property
    def answerer(self) -> Answerer:
        with self._lazy:
            if self._answerer is None:
                from ..answer.pipeline import Answerer

                # One retriever for searches and answers: one prior, one set of caches (the
                # prior's graph alone takes seconds and a gigabyte at a million chunks).
                self._answerer = Answerer(
                    self.root, self.config, retriever=self.retriever, in_memory=True
                )
            return self._answerer

    def privacy(self) -> Privacy:
        from .privacy import Privacy  # the ignore rules: kept off the start-up path

        return Privacy(self.root, self.index_dir, self.config)

    # -- configuration ----------------------------------------------------------------------

    def reconfigure(self, settings: Mapping[str, Any]) -> bool:
        """Apply new settings; True when the index must be rebuilt (index-shaping keys changed)."""
        config, self.problems = load_config_lenient(self.root, settings)
        if config == self.config:
            return False
        reindex = any(getattr(config, key) != getattr(self.config, key) for key in _INDEX_KEYS)
        if reindex:
            self.close()
        with self._lazy:
            self.config = config
            self.index_dir = config.resolved_index_dir(self.root)
            self.upkeep.configure(config, self.index_dir, reopen=reindex)
            self._answerer = None
            self._retriever = None  # it holds the old settings (rerank, weights)
            self.hovers.clear()
            if reindex:
                self._log_file = logfile.attach(self.index_dir)
        return reindex

    def close(self) -> None:
        self.upkeep.close()
        logfile.detach(self._log_file)
        self._log_file = None
