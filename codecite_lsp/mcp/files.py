"""Reading a workspace file for an agent: confined to the workspace, never a secret.

Every file the tools show goes through :func:`read_current`. The rules are the indexer's own
(``IgnoreRules``, ``read_source``): what is never indexed is never returned either, so an agent
cannot read through this server what a model would never have been shown:

- the path must be relative, without ``..``, and (after symlinks) inside the workspace;
- secret names (``.env``, keys, credentials), git-ignored, vendored and index files are refused,
  and so is a symlink whose target is one of these;
- a file holding a credential or private key, a binary, a minified or an over-large file is
  refused whole (``read_source``).
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from ..core.config import Config
from ..core.limits import MAX_PATH_CHARS
from ..ingest.ignore import IgnoreRules
from ..ingest.paths import relative_inside
from ..ingest.scan import REASON_VANISHED, SourceFile, read_source


class Refused(Exception):
    """The path may not be read; the message says why in plain words."""


class Missing(Exception):
    """No such file in the workspace."""


def clean_path(path: str) -> str:
    """The workspace-relative form of ``path``, or Refused for anything that could escape it."""
    if not path or "\0" in path or len(path) > MAX_PATH_CHARS:
        raise Refused("not a file path")
    posix = path.replace("\\", "/")
    # "C:/x" and "//server/x" are absolute on Windows even where posixpath says otherwise.
    if posixpath.isabs(posix) or os.path.isabs(path) or (len(posix) > 1 and posix[1] == ":"):
        raise Refused(f"{path!r} is absolute: give a path relative to the workspace root")
    if ".." in posix.split("/"):
        raise Refused(f"{path!r} leaves the workspace ('..' is not allowed)")
    rel = posixpath.normpath(posix)
    if rel == ".":
        raise Refused("the workspace root is a folder, not a file")
    return rel


def read_current(root: Path, path: str, config: Config) -> SourceFile:
    """The file's current text, or Refused / Missing; nothing private is ever read."""
    rel = clean_path(path)
    # Loaded per call: .gitignore may have changed since the last one (a few stat calls).
    rules = IgnoreRules.load(
        root, index_dir=config.resolved_index_dir(root), trusted=config.repository_trusted
    )
    private = f"{rel} is a secret or ignored file: its content is never returned"
    if rules.is_ignored(rel):  # folders included: "build/x.py", ".ssh/id_rsa"
        raise Refused(private)
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, rel))
    real_rel = relative_inside(real_root, real)
    if real_rel is None:
        raise Refused(f"{rel} leads outside the workspace (symlink)")
    if real_rel != rel and rules.is_ignored(real_rel):
        raise Refused(private)
    if not os.path.lexists(os.path.join(real_root, rel)):
        raise Missing(f"{rel}: no such file in the workspace")
    if os.path.isdir(real):  # read_source expects a file: os.fdopen fails on a folder
        raise Refused(f"{rel} is a folder, not a file")
    source = read_source(root, rel, config)
    if isinstance(source, SourceFile):
        return source
    if source.reason == REASON_VANISHED:
        raise Missing(f"{rel}: no such file in the workspace")
    raise Refused(f"{rel} is not readable here: {source.reason}")
