"""The base this process reads for an index folder: chosen, masked and copied once, kept for
the process's life.

A reader unpacks the chosen base's folder into ``<index>/base/<sha>`` once (written under a
temporary name and renamed when whole) and queries that: a full-text query against the store
costs ~0.5 s (a dozen requests), one on local disk a few milliseconds. The packed folder is one
table read in a few large requests, and its full-text index comes with it: copying the rows and
building the index locally took four times as long on the CPython stdlib. Nothing is written to
the store by a reader. Once a new copy is in place the copies no process reads are removed but
the newest earlier one (read when the store cannot be): see :func:`.copies.prune`.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path

from ...core.config import Config
from ...core.files import read_regular
from ..overlay import Overlay
from ..tables import said
from .copies import Removed, hold
from .fetch import adopt_embedder, adopt_meaning, choose, fetch
from .git import ancestors
from .layout import BaseError, BaseManifest, differences

log = logging.getLogger(__name__)


class OpenedBase:
    """The base in use for one index folder: its manifest, visibility mask and local copy.

    The copy is made in a thread of its own, started when the base is chosen: the overlay's
    pass needs only the manifest's file list, so both go on at once; the overlay's vector fill,
    which embeds with the base's model, waits for the model only (:meth:`model`, fetched first),
    readers for the whole copy in :meth:`folder`.
    """

    def __init__(
        self,
        uri: str,
        manifest: BaseManifest,
        overlay: Overlay,
        index_dir: Path,
        copied: Path | None = None,
        note: str | None = None,
    ) -> None:
        self.uri = uri
        self.manifest = manifest
        self.overlay = overlay
        self.note = note  # said once: e.g. the store was unreachable, an earlier copy read
        self._index_dir = index_dir
        self._folder: Path | BaseError | None = copied
        self._copier: threading.Thread | None = None
        self._model = threading.Event()  # set once the base's model is the overlay's (or none)
        self.removed = Removed()  # what making the copy removed (said by the CLI)
        if copied is not None:
            self._adopt(copied)
            adopt_meaning(copied, index_dir)
        else:
            self._copier = threading.Thread(target=self._copy, name="base-copy", daemon=True)
            self._copier.start()

    def _adopt(self, folder: Path) -> None:
        try:
            adopt_embedder(folder, self._index_dir)
        finally:
            self._model.set()

    def _copy(self) -> None:
        try:
            folder, self.removed = fetch(
                self.uri, self.manifest, cache_root(self._index_dir), self._adopt
            )
            if not self._model.is_set():  # an earlier copy, renamed into place meanwhile
                self._adopt(folder)
            adopt_meaning(folder, self._index_dir)  # the vectors come with the folder, last
            self._folder = folder
        except Exception as exc:  # whatever the reason, the base is not used: said, never raised
            log.warning("base %s not used: %s; the local index holds every file", self.uri, exc)
            self._folder = exc if isinstance(exc, BaseError) else BaseError(said(exc))
        finally:
            self._model.set()  # a failed copy: the overlay embeds with its own model

    def model(self) -> None:
        """Until the base's embedding model is the overlay's (when the base has one)."""
        self._model.wait()

    def made(self) -> Path | BaseError | None:
        """What :meth:`folder` returns, without waiting: None while the copy is being made."""
        return self._folder

    def folder(self) -> Path | BaseError:
        """The local copy (an index folder), once made; or why it could not be."""
        if self._copier is not None:
            self._copier.join()
        assert self._folder is not None
        return self._folder


_OPENED: dict[tuple[str, Path], OpenedBase | BaseError] = {}
_OPENED_LOCK = threading.Lock()


def cache_root(index_dir: Path) -> Path:
    return index_dir / "base"


def opened(repo: Path, config: Config, index_dir: Path) -> OpenedBase | BaseError | None:
    """The base this process reads for ``index_dir`` (chosen, copied and masked once), the
    reason there is none (the caller says it; the local index then holds every file; a copy
    that failed is a reason too), or None without a ``base`` setting."""
    if not config.base:
        return None
    key = (config.base, index_dir.resolve())
    with _OPENED_LOCK:
        found = _OPENED.get(key)
        if found is None:
            found = _OPENED[key] = _open(repo, config, index_dir, config.base)
            if isinstance(found, BaseError):
                log.warning("base %s not used: %s; the local index holds every file", key[0], found)
            elif found.note:
                log.warning("base %s: %s", key[0], found.note)
    made = found.made() if isinstance(found, OpenedBase) else None
    return made if isinstance(made, BaseError) else found


def _open(repo: Path, config: Config, index_dir: Path, uri: str) -> OpenedBase | BaseError:
    from ...ingest.scan import scan

    note = None
    folder: Path | None = None
    started = time.monotonic()
    try:
        manifest = choose(uri, repo, config)
        log.info("base %s: chosen in %.2f s", manifest.commit[:12], time.monotonic() - started)
        done = cache_root(index_dir) / manifest.commit
        folder = done if hold(done) else None
    except BaseError as exc:
        earlier = _earlier_copy(repo, config, index_dir)
        if earlier is None:
            return exc
        manifest, folder = earlier
        note = f"{exc}; reading the copy of the base of {manifest.commit[:12]} fetched earlier"
    overlay = Overlay(repo, manifest.files, index_dir / "base-unchanged.json")
    opened = OpenedBase(uri, manifest, overlay, index_dir, folder, note)  # the copy starts
    started = time.monotonic()
    overlay.refresh(scan(repo, config).files)
    log.info(
        "base %s: %d of its %d files unchanged here, found in %.2f s",
        manifest.commit[:12], len(manifest.files) - overlay.masked(), len(manifest.files),
        time.monotonic() - started,
    )  # fmt: skip
    return opened


def _earlier_copy(repo: Path, config: Config, index_dir: Path) -> tuple[BaseManifest, Path] | None:
    """A copy fetched earlier that still fits (an ancestor of HEAD, the same settings), for
    when the store cannot be read: a laptop offline keeps its base."""
    root = cache_root(index_dir)
    if not root.is_dir():
        return None
    copies = {p.name: p for p in root.iterdir() if (p / "base.json").is_file()}
    try:
        lineage = ancestors(repo) if copies else []
    except BaseError:
        return None
    for sha in lineage:
        if sha in copies:
            folder = copies[sha]
            try:
                copy = json.loads(read_regular(folder / "base.json")[0].decode("utf-8"))
                manifest = BaseManifest.parse(copy["header"], copy["files"])
            except (OSError, ValueError, TypeError, KeyError):
                return None
            fits = not differences(manifest, config) and hold(folder)
            return (manifest, folder) if fits else None
    return None
