"""Private files stay private through every door of the server (hover, ask, search, history,
openCitation), decided by the indexer's own rules, never a second set.

A path is private when, as named or where its symlinks lead, it is a secret by name or ignored
(``ingest.ignore.IgnoreRules``, which includes the secret names). A file is also closed to
openCitation and history when the indexer would not index it (``ingest.scan.read_source``: a
credential or private key inside, a symlink to a secret, too large ...): no citation can come
from such a file, so a forged or stale one must not open it.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.config import Config
from ..ingest.ignore import IgnoreRules
from ..ingest.paths import repo_relative
from ..ingest.scan import Skip, read_source

REASON_PRIVATE = "not an indexed file (ignored or secret)"


class Privacy:
    """The ignore rules of one root, loaded per request: a .gitignore may have changed since."""

    def __init__(self, root: Path, index_dir: Path, config: Config) -> None:
        self.root = root
        self.config = config
        self.rules = IgnoreRules.load(root, index_dir=index_dir, trusted=config.repository_trusted)

    def path_refusal(self, path: str | Path) -> str | None:
        """Why ``path`` (repo-relative or absolute) is private, or None. A path outside the
        root is private too: nothing outside was indexed."""
        named = self._named(path)
        real = self._real(path)
        if named is None or real is None:
            return REASON_PRIVATE
        if any(self.rules.is_ignored(rel) for rel in {named, real}):
            return REASON_PRIVATE
        return None

    def file_refusal(self, path: str | Path) -> str | None:
        """``path_refusal``, or why the indexer would not index the file as it is on disk."""
        why = self.path_refusal(path)
        if why is not None:
            return why
        named = self._named(path)
        assert named is not None
        source = read_source(self.root, named, self.config)
        if isinstance(source, Skip) and os.path.lexists(self.root / named):
            return f"not an indexed file ({source.reason})"
        return None  # indexable, or gone from disk (the citation then resolves as gone)

    def _named(self, path: str | Path) -> str | None:
        """The path as named, relative to the root, symlinks not followed."""
        return repo_relative(os.path.join(self.root, path), [str(self.root)])

    def _real(self, path: str | Path) -> str | None:
        """Where the path leads once every symlink is followed, relative to the root."""
        return repo_relative(str((self.root / path).resolve()), [str(self.root)])
