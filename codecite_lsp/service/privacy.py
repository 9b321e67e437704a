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
import posixpath
from pathlib import Path
from typing import Literal

from ..core.config import Config
from ..core.limits import MAX_PATH_CHARS
from ..ingest.ignore import IgnoreRules
from ..ingest.paths import repo_relative
from ..ingest.scan import REASON_VANISHED, Skip, SourceFile, read_source

REASON_PRIVATE = "not an indexed file (ignored or secret)"


class Unreadable(Exception):
    """The path may not be read; the message says why in plain words."""


class Missing(Exception):
    """No such file in the workspace."""


def _missing(rel: str) -> Missing:
    why = f"{rel}: no such file in the workspace"
    if "\ufffd" in rel:  # what the servers make of a name that is not UTF-8 (core/surrogates.py)
        why += (
            " (U+FFFD stands for bytes that were not UTF-8 text or a lone surrogate such as"
            " \\udcff: a repository path is UTF-8, send it as such)"
        )
    return Missing(why)


def clean_path(path: str) -> str:
    """The workspace-relative form of ``path``, or Unreadable for anything that could escape it."""
    if not path or "\0" in path or len(path) > MAX_PATH_CHARS:
        raise Unreadable("not a file path")
    posix = path.replace("\\", "/")
    # "C:/x" and "//server/x" are absolute on Windows even where posixpath says otherwise.
    if posixpath.isabs(posix) or os.path.isabs(path) or (len(posix) > 1 and posix[1] == ":"):
        raise Unreadable(f"{path!r} is absolute: give a path relative to the workspace root")
    if ".." in posix.split("/"):
        raise Unreadable(f"{path!r} leaves the workspace ('..' is not allowed)")
    rel = posixpath.normpath(posix)
    if rel == ".":
        raise Unreadable("the workspace root is a folder, not a file")
    return rel


class Privacy:
    """The ignore rules of one root, loaded per request: a .gitignore may have changed since."""

    def __init__(self, root: Path, index_dir: Path, config: Config) -> None:
        self.root = root
        self.config = config
        self.rules = IgnoreRules.load(root, index_dir=index_dir, trusted=config.repository_trusted)

    @classmethod
    def for_root(cls, root: Path, config: Config) -> Privacy:
        """The rules of ``root`` with its configured index folder (a door without a Session)."""
        return cls(root, config.resolved_index_dir(root), config)

    def path_refusal(self, path: str | Path) -> str | None:
        """Why ``path`` (repo-relative or absolute) is private, or None. A path outside the
        root is private too: nothing outside was indexed."""
        return None if self._private(path) is None else REASON_PRIVATE

    def read(self, path: str) -> SourceFile:
        """The file's current text for an agent, or Unreadable / Missing: a private file (as
        named or where its symlinks lead: folders included, "build/x.py", ".ssh/id_rsa"), or one
        the indexer would not index (a credential inside, binary, minified, too large)."""
        rel = clean_path(path)
        private = self._private(rel)
        if private == "outside":
            raise Unreadable(f"{rel} leads outside the workspace (symlink)")
        if private == "ignored":
            raise Unreadable(f"{rel} is a secret or ignored file: its content is never returned")
        if not os.path.lexists(self.root / rel):
            raise _missing(rel)
        if (self.root / rel).is_dir():  # read_source expects a file: os.fdopen fails on a folder
            raise Unreadable(f"{rel} is a folder, not a file")
        source = read_source(self.root, rel, self.config)
        if isinstance(source, SourceFile):
            return source
        if source.reason == REASON_VANISHED:
            raise _missing(rel)
        raise Unreadable(f"{rel} is not readable here: {source.reason}")

    def _private(self, path: str | Path) -> Literal["outside", "ignored"] | None:
        """Whether ``path`` is private: it (or where it leads) is outside the root, or ignored."""
        named = self._named(path)
        if named is None:
            return "outside"
        if self.rules.is_ignored(named):
            return "ignored"
        real = self._real(path)
        if real is None:
            return "outside"
        if real != named and self.rules.is_ignored(real):
            return "ignored"
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
        # The root's own real path too: a root named through a symlink holds its files.
        roots = [str(self.root), os.path.realpath(self.root)]
        return repo_relative(str((self.root / path).resolve()), roots)
