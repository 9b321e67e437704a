"""What the commands share: the progress bar, an index pass, what is said about the base
and about an index to build first, an OS error in plain words.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.config import Config
from ..core.visible import for_terminal, raw

if TYPE_CHECKING:
    from ..index.indexer import Indexer, IndexReport


class ProgressBar:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()

    def __call__(self, done: int, total: int, message: str) -> None:
        if not self.enabled:
            return
        width = 30
        filled = width * done // total if total else width
        percent = 100 * done // total if total else 100
        line = f"[{'#' * filled}{'.' * (width - filled)}] {percent:3d}% {message[:50]:<50}"
        raw(sys.stderr).write("\r" + for_terminal(line))  # the message is a repository path
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            raw(sys.stderr).write("\r" + " " * 90 + "\r")
            sys.stderr.flush()


def run_index(indexer: Indexer, quiet: bool, vectors: bool = True) -> IndexReport:
    """One index pass with the progress bar; skipped files are listed on stderr."""
    bar = ProgressBar(not quiet)
    try:
        report = indexer.run(progress=bar, vectors=vectors)
    finally:
        bar.close()
    print_skips(report)
    return report


def print_skips(report: IndexReport) -> None:
    """The files a pass skipped, each with why, on stderr."""
    for skip in report.skipped:
        print(f"skipped {skip.path}: {skip.reason}", file=sys.stderr)


def say_base(repo: Path, config: Config) -> None:
    """Why the ``base`` setting's base is not read (or what was read instead), on stderr."""
    if not config.base:
        return
    from ..index.base import BaseError, OpenedBase, opened

    found = opened(repo, config, config.resolved_index_dir(repo))
    if isinstance(found, BaseError):
        print(
            f"codecite: base {config.base} not used: {found}; the local index holds every file",
            file=sys.stderr,
        )
    elif isinstance(found, OpenedBase) and found.note:
        print(f"codecite: base {config.base}: {found.note}", file=sys.stderr)


OUTDATED = "the index was written by another version of codecite"


def why_index_first(repo: Path, config: Config) -> str | None:
    """Why a command must index the repository before it can search, or None: never indexed,
    or written in another layout (an upgrade), which opening the index empties. "" for a
    damaged meta.json: opening the index says so itself."""
    from ..index.meta import MetaFile

    meta = MetaFile(config.resolved_index_dir(repo)).read()
    if meta.schema_version == -1:
        return ""
    if not meta.current:
        return f"{OUTDATED}; rebuilding it first"
    if meta.chunk_budget is None:
        return "no index yet; indexing the repository first"
    return None


def os_error(exc: OSError) -> str:
    """An OS error in one line, with a hint when the index folder is somebody else's."""
    where = f": {exc.filename}" if exc.filename else ""
    hint = (
        " (an index somebody else built here is read as it is; pass --index-dir DIR to keep"
        " one of your own)"
        if isinstance(exc, PermissionError)
        else ""
    )
    return f"{exc.strerror or exc}{where}{hint}"
