"""A base's layout on the store, what refuses one, and the connection to the store.

On the store (one LanceDB database at the URI, several commits side by side):

- ``folder-<sha>``: the index folder a reader needs, packed as rows (a file's path, its bytes):
  the tables written afresh, one version each, with the full-text index built by the publisher;
  ``embedding-<sha>``: the trained default embedder's model file, as bytes;
- ``bases``: one row per published commit, written last (the commit marker): the manifest
  (commit, layout, the settings that shape the index, embedder, the file list with content
  hashes). A reader lists it, picks the newest row whose commit is an ancestor of HEAD, and
  refuses one built otherwise, naming the difference.

Credentials are LanceDB's: the standard environment (``AWS_*``, ``GOOGLE_*``, ``AZURE_*``) or
the cloud profile; only timeouts are passed here, so an unreachable store fails in seconds, not
minutes.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...core.config import Config
from ..lance_import import import_lancedb
from ..meta import SCHEMA_VERSION

FORMAT = 1  # the layout of a base on the store (tables and manifest columns)
MANIFESTS = "bases"
# Settings that change what the index holds: a base built with others is refused (answer-only
# settings and where the index lives do not matter).
# What is ignored travels with the commit (.gitignore, .codeciteignore); a file a reader's own
# rules (or trust) leave out is masked, one they add is indexed in the overlay.
SHAPING = ("chunk_budget", "max_file_bytes", "max_line_length", "embedding")
PACKING = "zstd"  # the codec of a packed folder's files
# Fail in seconds when the store cannot be reached (LanceDB's defaults retry for minutes); the
# environment (TIMEOUT, CONNECT_TIMEOUT, ...) is read by LanceDB for everything else.
_STORAGE_OPTIONS = {
    "connect_timeout": "3s",
    "timeout": "60s",
    "client_max_retries": "2",
    "client_retry_timeout": "10",
}


class BaseError(RuntimeError):
    """A base cannot be published or used; the message says why in plain words."""


@dataclass(frozen=True)
class BaseManifest:
    commit: str
    created: str  # ISO time of publishing
    layout: int  # the index's SCHEMA_VERSION
    settings: dict[str, Any]  # the SHAPING settings it was built with
    embedder: str | None  # the embedder's name (vectors are stored under it)
    dim: int | None
    chunks: int
    version: str  # codecite's version that published it (informational)
    format: int = FORMAT
    files: dict[str, str] = field(default_factory=dict)  # path -> content hash (sha256)

    def header(self) -> str:
        """The manifest without its file list (what a reader lists to choose)."""
        values = asdict(self)
        del values["files"]
        return json.dumps(values, sort_keys=True)

    @classmethod
    def parse(cls, header: str, files: str | None = None) -> BaseManifest:
        raw = json.loads(header)
        raw["files"] = json.loads(files) if files else {}
        return cls(**raw)


def shaping(config: Config) -> dict[str, Any]:
    return {key: getattr(config, key) for key in SHAPING}


def differences(manifest: BaseManifest, config: Config) -> list[str]:
    """Why this base cannot serve an index built with ``config`` (empty: it can)."""
    found = []
    if manifest.format != FORMAT or manifest.layout != SCHEMA_VERSION:
        found.append(
            f"index layout {manifest.layout}/{manifest.format} (here {SCHEMA_VERSION}/{FORMAT})"
        )
    ours = shaping(config)
    for key in SHAPING:
        if manifest.settings.get(key) != ours[key]:
            found.append(f"{key}={manifest.settings.get(key)!r} (here {ours[key]!r})")
    return found


def connect(uri: str) -> Any:
    lancedb = import_lancedb()
    if "://" in uri:
        return lancedb.connect(uri, storage_options=dict(_STORAGE_OPTIONS))
    Path(uri).mkdir(parents=True, exist_ok=True)
    return lancedb.connect(uri)


def table_names(db: Any) -> set[str]:
    """The tables of a LanceDB database (a store or a local folder)."""
    return set(db.list_tables().tables)
