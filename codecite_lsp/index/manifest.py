"""The manifest of the last complete index pass, so that ``codecite index`` on an unchanged
checkout answers from a stat walk without opening the index (importing lancedb, pyarrow and
numpy costs seconds; the walk costs tens of milliseconds).

``manifest.json`` (beside meta.json) is written by the indexer at the very end of a pass that
finished everything (chunks, the search probe, vectors, any optimisation). It holds:

- the files the pass walked, path -> (size, mtime_ns, ctime_ns) as the walk saw them at the
  pass's start (a file edited during the pass therefore differs from it next time; ctime also
  tells a permission change, and a write whose mtime was set back);
- the files the pass skipped for their content (binary, credential ...), with the reasons, to
  report them again: a stat walk alone cannot tell. The next pass reads them again only if
  their stat changed (:func:`lasting_skips`): a reload of an unchanged checkout re-reads none;
- the settings the pass ran with (every Config field but those only answering reads, and the
  package version, so a new setting or an upgrade never trusts an index built otherwise);
- a fingerprint of the index folder's own files (name, size and mtime of every LanceDB data,
  version, transaction and full-text index file, the embedder's files and meta.json): a server
  writing the index, an FTS file deleted or a table truncated all change it.

The check (:func:`unchanged_since_last_pass`) walks with the scan's own walker and rules
(``ingest.scan.scan``, which stats files without reading them). Any difference, or a manifest
missing, unreadable or of another format, means the normal pass.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import stat
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.config import Config
from ..core.files import read_regular
from ..ingest.injection import RULES_VERSION
from ..ingest.scan import Skip, WorkspaceFile, lasting, scan
from .meta import SCHEMA_VERSION
from .passes import IndexReport

log = logging.getLogger(__name__)

MANIFEST_NAME = "manifest.json"
# Set (to anything): `codecite index` runs the normal pass even when nothing changed; for the
# benchmark that compares the two.
BYPASS_ENV = "CODECITE_INDEX_BYPASS_MANIFEST"
FORMAT = 1
# What the index is made of, relative to the index folder. Not the lock, logs or traces: they
# change without the index changing.
_INDEX_PARTS = ("lance", "embedding", "meta.json")

# Settings read only when answering: `codecite ask --model X` or a server's hover settings do
# not make the index look out of date. Any other setting (a new one too) counts.
_ANSWER_ONLY = frozenset(
    {
        "model", "api_key_env", "hover", "hover_timeout", "model_timeout", "model_retries",
        "candidates", "context_chunks", "context_tokens", "relevance_floor", "debounce_ms",
        "support_check",
    }
)  # fmt: skip

Stat = tuple[int, int]  # size, mtime_ns
FileStat = tuple[int, int, int]  # size, mtime_ns, ctime_ns


@dataclass(frozen=True)
class Manifest:
    settings: dict[str, Any]
    files: dict[str, FileStat]  # the walk: what the pass compared with the index
    content_skips: dict[str, str]  # path -> reason, for walked files refused when read, in order
    folder: dict[str, Stat]  # the index folder's fingerprint
    indexed_files: int
    chunks: int


# --- pure ---------------------------------------------------------------------------------------


def settings_of(config: Config, index_dir: Path) -> dict[str, Any]:
    """Everything a pass's outcome may depend on besides the files (JSON-shaped)."""
    values = {k: v for k, v in dataclasses.asdict(config).items() if k not in _ANSWER_ONLY}
    values["index_dir"] = str(index_dir)
    # The layout too: an upgrade that changes it (within one version number, as from a checkout)
    # must rebuild the index, never report it unchanged.
    layout = {"schema": SCHEMA_VERSION, "injection_rules": RULES_VERSION}
    return {"format": FORMAT, "version": __version__, "layout": layout, "config": values}


def walked(files: Iterable[WorkspaceFile]) -> dict[str, FileStat]:
    return {f.path: (f.size, f.mtime_ns, f.ctime_ns) for f in files}


def build(
    config: Config,
    index_dir: Path,
    files: list[WorkspaceFile],
    report: IndexReport,
    folder: dict[str, Stat],
) -> Manifest:
    stats = walked(files)
    return Manifest(
        settings=settings_of(config, index_dir),
        files=stats,
        # A walked file that was skipped was refused for its content (the walk's own refusals
        # are of files it does not list); the walk finds those again by itself.
        content_skips={s.path: s.reason for s in report.skipped if s.path in stats},
        folder=folder,
        indexed_files=report.files,
        chunks=report.chunks,
    )


def to_json(manifest: Manifest) -> str:
    return json.dumps(dataclasses.asdict(manifest), separators=(",", ":"))


def from_json(text: str) -> Manifest | None:
    """The manifest, or None for anything not written by this version's :func:`to_json`."""
    try:
        raw = json.loads(text)
        manifest = Manifest(
            settings=raw["settings"],
            files={
                path: (size, mtime, ctime) for path, (size, mtime, ctime) in raw["files"].items()
            },
            content_skips=dict(raw["content_skips"]),
            folder={path: (size, mtime) for path, (size, mtime) in raw["folder"].items()},
            indexed_files=int(raw["indexed_files"]),
            chunks=int(raw["chunks"]),
        )
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    if not isinstance(manifest.settings, dict) or manifest.settings.get("format") != FORMAT:
        return None
    return manifest


# --- I/O ----------------------------------------------------------------------------------------


def folder_fingerprint(index_dir: Path) -> dict[str, Stat]:
    """Name (relative, "/"), size and mtime of every file of the index proper."""
    found: dict[str, Stat] = {}
    pending = list(_INDEX_PARTS)
    while pending:
        rel = pending.pop()
        path = index_dir / rel
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            continue  # absent (no vectors, say): absence is part of the fingerprint
        if not stat.S_ISDIR(st.st_mode):
            found[rel] = (st.st_size, st.st_mtime_ns)
            continue
        try:
            pending.extend(f"{rel}/{name}" for name in os.listdir(path))
        except OSError:
            found[rel] = (-1, -1)  # unreadable: never equal to what a pass recorded
    return found


def write(index_dir: Path, manifest: Manifest) -> None:
    """Atomically (temp file + rename): a crash leaves the old manifest or the new one."""
    target = index_dir / MANIFEST_NAME
    temp = target.with_suffix(f".tmp{os.getpid()}.{threading.get_ident()}")
    temp.write_text(to_json(manifest), encoding="utf-8")
    os.replace(temp, target)


def discard(index_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (index_dir / MANIFEST_NAME).unlink()


def record_pass(
    index_dir: Path, config: Config, files: list[WorkspaceFile], report: IndexReport
) -> None:
    """Called by the indexer once a pass finished everything (not for a cancelled one)."""
    try:
        write(index_dir, build(config, index_dir, files, report, folder_fingerprint(index_dir)))
    except OSError as exc:  # a shortcut lost, nothing else: the next pass is a normal one
        log.warning("could not write %s: %s", index_dir / MANIFEST_NAME, exc)


def read(index_dir: Path) -> Manifest | None:
    try:
        return from_json(read_regular(index_dir / MANIFEST_NAME)[0].decode("utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def lasting_skips(index_dir: Path, config: Config) -> dict[str, tuple[FileStat, str]]:
    """path -> (stat, reason) of the files the last complete pass refused for a reason that
    holds while the file is unchanged (binary, key, size, minified ...); empty when that pass
    ran with other settings (a new max_file_bytes may accept them) or another version."""
    stored = read(index_dir)
    if stored is None or stored.settings != settings_of(config, index_dir):
        return {}
    return {
        path: (stored.files[path], reason)
        for path, reason in stored.content_skips.items()
        if path in stored.files and lasting(reason)
    }


def unchanged_since_last_pass(repo: Path, config: Config) -> IndexReport | None:
    """The report of a pass that would find nothing to do, if neither the repository's files (by
    the scan's stat walk) nor the index folder changed since the last pass; None: run one."""
    started = time.monotonic()
    index_dir = config.resolved_index_dir(repo)
    stored = read(index_dir)
    if stored is None or stored.settings != settings_of(config, index_dir):
        return None
    found = scan(repo, config)
    if walked(found.files) != stored.files or folder_fingerprint(index_dir) != stored.folder:
        return None
    skipped = found.skipped + [Skip(p, r) for p, r in stored.content_skips.items()]
    seconds = time.monotonic() - started
    return IndexReport(stored.indexed_files, stored.chunks, seconds, 0, 0, skipped, unchanged=True)
