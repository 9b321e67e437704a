"""A shared base index: published once per commit (in CI) to an object store through LanceDB's
own S3/GCS/Azure support, and read by every teammate whose checkout descends from that commit.

On the store (one LanceDB database at the URI, several commits side by side):

- ``folder-<sha>``: the index folder a reader needs, packed as rows (a file's path, its bytes):
  the tables written afresh, one version each, with the full-text index built by the publisher;
  ``embedding-<sha>``: the trained default embedder's model file, as bytes;
- ``chunks-<sha>``, ``files-<sha>``, ``vectors-<sha>``: the tables as rows, written only by
  versions before the packed folder existed (no longer: the folder holds the same rows); a base
  that has only these is still read, row by row;
- ``bases``: one row per published commit, written last (the commit marker): the manifest
  (commit, layout, the settings that shape the index, embedder, the file list with content
  hashes). A reader lists it, picks the newest row whose commit is an ancestor of HEAD, and
  refuses one built otherwise, naming the difference.

A reader unpacks the chosen base's folder into ``<index>/base/<sha>`` once (written under a
temporary name and renamed when whole) and queries that: a full-text query against the store
costs ~0.5 s (a dozen requests), one on local disk a few milliseconds. The packed folder is one
table read in a few large requests, and its full-text index comes with it: copying the rows and
building the index locally took four times as long on the CPython stdlib. Nothing
is written to the store by a reader. Once a new copy is in place the copies no process reads
are removed but the newest earlier one (read when the store cannot be): see :func:`prune`.
Credentials are LanceDB's: the standard environment
(``AWS_*``, ``GOOGLE_*``, ``AZURE_*``) or the cloud profile; only timeouts are passed here, so an
unreachable store fails in seconds, not minutes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any

from .. import __version__
from ..core.config import Config
from ..core.files import read_regular
from .lance_import import import_lancedb
from .meta import SCHEMA_VERSION, Meta, MetaFile
from .overlay import Overlay
from .static_embedding import static_model_path
from .tables import said, sql_literal

if TYPE_CHECKING:
    from .store import Store

log = logging.getLogger(__name__)

FORMAT = 1  # the layout of a base on the store (tables and manifest columns)
MANIFESTS = "bases"
TABLES = ("chunks", "files", "vectors")
# Settings that change what the index holds: a base built with others is refused (answer-only
# settings and where the index lives do not matter).
# What is ignored travels with the commit (.gitignore, .codeciteignore); a file a reader's own
# rules (or trust) leave out is masked, one they add is indexed in the overlay.
SHAPING = ("chunk_budget", "max_file_bytes", "max_line_length", "embedding")
# Fail in seconds when the store cannot be reached (LanceDB's defaults retry for minutes); the
# environment (TIMEOUT, CONNECT_TIMEOUT, ...) is read by LanceDB for everything else.
_STORAGE_OPTIONS = {
    "connect_timeout": "3s",
    "timeout": "60s",
    "client_max_retries": "2",
    "client_retry_timeout": "10",
}
_GIT_TIMEOUT = 30.0
_PACKING = "zstd"  # the codec of a packed folder's files


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


# --- git ----------------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BaseError(f"git could not be run in {repo}: {exc}") from None
    if done.returncode != 0:
        raise BaseError(f"{repo} has no git commit to match a base with ({done.stderr.strip()})")
    return done.stdout


def head_commit(repo: Path) -> str:
    return _git(repo, "rev-parse", "HEAD").strip()


def ancestors(repo: Path) -> list[str]:
    """HEAD and every commit it descends from, newest first."""
    return _git(repo, "rev-list", "HEAD").split()


def tracked_changes(repo: Path) -> list[str]:
    """Tracked files whose working-tree content differs from HEAD."""
    lines = _git(repo, "status", "--porcelain", "--untracked-files=no").splitlines()
    return [line[3:] for line in lines if line.strip()]


# --- the store ----------------------------------------------------------------------------------


def connect(uri: str) -> Any:
    lancedb = import_lancedb()
    if "://" in uri:
        return lancedb.connect(uri, storage_options=dict(_STORAGE_OPTIONS))
    Path(uri).mkdir(parents=True, exist_ok=True)
    return lancedb.connect(uri)


def _table_names(db: Any) -> set[str]:
    return set(db.list_tables().tables)


def publish(store: Store, config: Config, commit: str, uri: str) -> BaseManifest:
    """Write ``store``'s tables (a complete local index of ``commit``) as the base of that
    commit; the manifest row last, so a reader never finds a base whose tables are partial."""
    try:
        return _publish(store, config, commit, uri)
    except Exception as exc:  # the store unreachable, refused, full: said in plain words
        raise BaseError(f"the base store {uri} cannot be written ({said(exc)})") from None


def _publish(store: Store, config: Config, commit: str, uri: str) -> BaseManifest:
    import pyarrow as pa

    db = connect(uri)
    files_table = store.tables.file_rows()
    meta = store.meta
    manifest = BaseManifest(
        commit=commit,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        layout=SCHEMA_VERSION,
        settings=shaping(config),
        embedder=meta.embedder,
        dim=meta.dim,
        chunks=store.chunk_count(),
        version=__version__,
        files=dict(
            zip(files_table["path"].to_pylist(), files_table["revision"].to_pylist(), strict=True)
        ),
    )
    tables = {"chunks": store.tables.chunks.to_arrow(), "files": files_table}
    vectors = store.vectors.table()
    if vectors is not None and vectors.count_rows():
        tables["vectors"] = vectors.to_arrow()
    db.create_table(f"folder-{commit}", _packed(tables, store.index_dir, commit), mode="overwrite")
    model = static_model_path(store.index_dir)
    if config.embedding == "default" and model.is_file():
        blob = pa.table({"name": [model.name], "data": [model.read_bytes()]})
        db.create_table(f"embedding-{commit}", blob, mode="overwrite")
    row = pa.table(
        {
            "commit": [commit],
            "created": [manifest.created],
            "header": [manifest.header()],
            "files": [json.dumps(manifest.files, sort_keys=True)],
        }
    )
    if MANIFESTS in _table_names(db):
        bases = db.open_table(MANIFESTS)
        bases.merge_insert(
            "commit"
        ).when_matched_update_all().when_not_matched_insert_all().execute(row)
    else:
        db.create_table(MANIFESTS, row)
    return manifest


def _packed(tables: dict[str, Any], index_dir: Path, commit: str) -> Any:
    """The LanceDB folder of ``tables`` as rows (path inside it, bytes), the chunks' full-text
    index built: written afresh in a scratch folder, so it holds no older versions. The scratch
    folders of publishers that were killed are removed first."""
    import pyarrow as pa

    from .keyword import build_fts

    for leftover in (p for p in index_dir.iterdir() if _ended(p.name)):
        shutil.rmtree(leftover, ignore_errors=True)
    scratch = index_dir / f".{commit}.tmp{os.getpid()}.publish"
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        db = import_lancedb().connect(scratch)
        for name, rows in tables.items():
            table = db.create_table(name, rows)
            if name == "chunks" and rows.num_rows:
                build_fts(table)
        files = sorted(p for p in scratch.rglob("*") if p.is_file())
        data = [p.read_bytes() for p in files]
        return pa.table(
            {
                "path": [p.relative_to(scratch).as_posix() for p in files],
                "size": pa.array([len(d) for d in data], pa.int64()),
                # zstd: text and vectors shrink ~3x, and the store is read at tens of MB/s
                "data": pa.array(
                    [pa.compress(d, codec=_PACKING, asbytes=True) for d in data], pa.large_binary()
                ),
            }
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _unpack(packed: Any, lance_dir: Path) -> None:
    """Write a packed folder's files under ``lance_dir``; a path that would land outside it
    (a store written by something else) refuses the base."""
    import pyarrow as pa

    paths = [PurePosixPath(path) for path in packed["path"].to_pylist()]
    for path in paths:  # all checked before any is written
        if path.is_absolute() or ".." in path.parts or not path.parts:
            raise BaseError(f"its packed folder names a file outside it ({str(path)!r})")
    data = packed["data"]
    for number, (path, size) in enumerate(zip(paths, packed["size"].to_pylist(), strict=True)):
        target = lance_dir.joinpath(*path.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        body = pa.decompress(data[number].as_buffer(), size, codec=_PACKING)
        with target.open("wb") as handle:
            handle.write(body)


def choose(uri: str, repo: Path, config: Config) -> BaseManifest:
    """The newest base on the store whose commit is HEAD or an ancestor of it, with its file
    list; BaseError (in plain words) when the store cannot be read, none fits, or the nearest
    one was built with other settings."""
    try:
        db = connect(uri)
        if MANIFESTS not in _table_names(db):
            raise BaseError(f"no base has been published to {uri}")
        bases = db.open_table(MANIFESTS)
        rows = bases.search().select(["commit", "header"]).limit(None).to_arrow().to_pylist()
    except BaseError:
        raise
    except Exception as exc:
        raise BaseError(f"the base store {uri} cannot be read ({said(exc)})") from None
    published = {row["commit"]: row["header"] for row in rows}
    lineage = ancestors(repo)
    nearest = next((sha for sha in lineage if sha in published), None)
    if nearest is None:
        raise BaseError(
            f"none of the {len(published)} bases in {uri} is HEAD or an ancestor of it"
            " (publish one from a commit this checkout contains)"
        )
    try:
        header = BaseManifest.parse(published[nearest])
    except (ValueError, TypeError, KeyError) as exc:
        raise BaseError(f"the base of {nearest[:12]} in {uri} is unreadable ({exc})") from None
    if header.commit != nearest:  # it names the local copy's folder: git's sha, nothing else
        raise BaseError(f"the base of {nearest[:12]} in {uri} names another commit")
    refused = differences(header, config)
    if refused:
        raise BaseError(
            f"the base of {nearest[:12]} in {uri} was built with other settings: "
            + ", ".join(refused)
        )
    where = f"commit = {sql_literal(nearest)}"
    found = bases.search().where(where).select(["files"]).limit(1).to_arrow().to_pylist()
    return BaseManifest.parse(published[nearest], found[0]["files"] if found else None)


@dataclass(frozen=True)
class Removed:
    """What :func:`prune` removed from a base's copies folder."""

    copies: int = 0  # earlier copies no process read
    leftovers: int = 0  # temporary folders of processes that ended mid-copy
    freed: int = 0  # bytes

    def __str__(self) -> str:
        parts = [f"{self.copies} earlier copies of the base"] if self.copies else []
        parts += [f"{self.leftovers} half-made by ended processes"] if self.leftovers else []
        return f"removed {' and '.join(parts)}, {self.freed / 1e6:.1f} MB freed"


def fetch(
    uri: str,
    manifest: BaseManifest,
    cache_root: Path,
    model_fetched: Callable[[Path], None] | None = None,
) -> tuple[Path, Removed]:
    """The local copy of the base (made once per commit): a normal index folder, read only,
    held for this process's life (:func:`hold`); and what was removed once a new one was made.

    The embedding model comes first: ``model_fetched`` is told the folder it is in before the
    index files are copied (the overlay's vectors need only the model). The packed folder is
    unpacked when the base has one (its chunk count checked against the manifest); an older
    base's rows are copied with LanceDB and the full-text index built locally. A folder is
    complete only once renamed into place.
    """
    folder = cache_root / manifest.commit
    if hold(folder):
        return folder, Removed()
    temp = cache_root / f".{manifest.commit}.tmp{os.getpid()}.{threading.get_ident()}"
    try:
        remote = connect(uri)
        names = _table_names(remote)
        cache_root.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(temp, ignore_errors=True)
        if f"embedding-{manifest.commit}" in names:
            started = time.monotonic()
            blob = remote.open_table(f"embedding-{manifest.commit}").to_arrow().to_pylist()[0]
            model = static_model_path(temp)
            model.parent.mkdir(parents=True, exist_ok=True)
            model.write_bytes(blob["data"])
            log.info(
                "base %s: embedding model copied, %.1f MB, in %.2f s",
                manifest.commit[:12], len(blob["data"]) / 1e6, time.monotonic() - started,
            )  # fmt: skip
            if model_fetched is not None:
                model_fetched(temp)
        if f"folder-{manifest.commit}" in names:
            _copy_folder(remote, manifest, temp / "lance")
        else:
            _copy_rows(remote, names, manifest, temp / "lance")
    except Exception as exc:
        shutil.rmtree(temp, ignore_errors=True)
        raise BaseError(
            f"the base of {manifest.commit[:12]} in {uri} cannot be copied ({said(exc)})"
        ) from None
    MetaFile(temp).save(
        Meta(
            embedder=manifest.embedder,
            dim=manifest.dim,
            chunk_budget=manifest.settings.get("chunk_budget"),
            chunks=manifest.chunks,
            files=len(manifest.files),
        )
    )
    (temp / ".gitignore").write_text("*\n", encoding="utf-8")
    copy = {"header": manifest.header(), "files": json.dumps(manifest.files, sort_keys=True)}
    (temp / "base.json").write_text(json.dumps(copy), encoding="utf-8")
    try:
        os.replace(temp, folder)
        placed = True
    except OSError:  # another process put the same base in place first: theirs is as good
        shutil.rmtree(temp, ignore_errors=True)
        placed = False
    if not hold(folder):  # removed between its rename and our hold: only by hand
        raise BaseError(f"the copy of the base of {manifest.commit[:12]} vanished as it was made")
    return folder, prune(cache_root, folder) if placed else Removed()


# --- local copies: held by their readers, the others removed ------------------------------------
#
# A reader holds a shared flock on its copy's ``base.json`` for its life; a prune removes only a
# copy it can lock exclusively. Chosen over "keep the two newest": a server open for days on an
# older copy survives any number of newer fetches by CLI runs, and the kernel drops the lock of a
# process that dies however it dies, so no marker is ever left stale.

_HELD: dict[Path, IO[bytes]] = {}
_HELD_LOCK = threading.Lock()
_TEMP = re.compile(r"\.[0-9a-f]+\.tmp([0-9]+)\.")  # ``.<sha>.tmp<pid>.<thread or "gone">``


def hold(folder: Path) -> bool:
    """Mark the copy in ``folder`` read by this process, until it ends; False when there is no
    whole copy there (never made, or removed by a prune)."""
    with _HELD_LOCK:
        if folder in _HELD:
            return True
        try:
            handle = (folder / "base.json").open("rb")
        except OSError:
            return False
        fcntl.flock(handle, fcntl.LOCK_SH)  # waits out a prune renaming it away (a moment)
        if not (folder / "base.json").is_file():  # it did: what is held is the removed one
            handle.close()
            return False
        _HELD[folder] = handle
        return True


def prune(cache_root: Path, keep: Path) -> Removed:
    """Remove the copies under ``cache_root`` that no process reads, except ``keep`` (the one
    just made) and the newest other (the fallback when the store cannot be read: most likely
    the base HEAD descended from before), and the temporary folders of processes that ended."""
    try:
        entries = list(cache_root.iterdir())
    except OSError:
        return Removed()
    copies = [p for p in entries if p != keep and (p / "base.json").is_file()]
    copies.sort(key=_fetched_at, reverse=True)
    removed = [size for p in copies[1:] if (size := _remove_unread(p)) is not None]
    ended = [p for p in entries if _ended(p.name)]
    leftovers = [_size(p) for p in ended]
    for path in ended:
        shutil.rmtree(path, ignore_errors=True)
    done = Removed(len(removed), len(leftovers), sum(removed) + sum(leftovers))
    if done.copies or done.leftovers:
        log.info("base copies in %s: %s", cache_root, done)
    return done


def _fetched_at(folder: Path) -> float:
    try:
        return (folder / "base.json").stat().st_mtime  # written last, as the copy was made
    except OSError:  # removed meanwhile by another process's prune
        return 0.0


def _remove_unread(folder: Path) -> int | None:
    """Remove a copy unless a process holds it (None then); the bytes it took."""
    try:
        handle = (folder / "base.json").open("rb")
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # read by a live process (this one included)
            return None
        # renamed first, under the lock: a reader finds no copy rather than half of one, and a
        # removal cut short leaves a temporary folder of an ended process, removed next time
        gone = folder.with_name(f".{folder.name}.tmp{os.getpid()}.gone")
        try:
            os.replace(folder, gone)
        except OSError:
            return None
    size = _size(gone)
    shutil.rmtree(gone, ignore_errors=True)
    return size


def _ended(name: str) -> bool:
    """A temporary folder whose process is no longer alive (a live one's, or one of a reused
    pid, is left: it costs disk until that process ends, never a copy being written)."""
    found = _TEMP.match(name)
    if found is None or int(found[1]) <= 0:
        return False
    try:
        os.kill(int(found[1]), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


def _size(folder: Path) -> int:
    total = 0
    for top, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):  # removed meanwhile
                total += os.lstat(os.path.join(top, name)).st_size
    return total


def _copy_folder(remote: Any, manifest: BaseManifest, lance_dir: Path) -> None:
    started = time.monotonic()
    packed = remote.open_table(f"folder-{manifest.commit}").to_arrow()
    read = time.monotonic()
    _unpack(packed, lance_dir)
    log.info(
        "base %s: folder copied, %d files, %.1f MB: read %.2f s, written %.2f s",
        manifest.commit[:12], packed.num_rows, packed.nbytes / 1e6,
        read - started, time.monotonic() - read,
    )  # fmt: skip
    if manifest.chunks:  # a folder that lost its chunks would answer nothing, silently
        found = import_lancedb().connect(lance_dir).open_table("chunks").count_rows()
        if found != manifest.chunks:
            raise BaseError(f"its folder holds {found} chunks, its manifest {manifest.chunks}")


def _copy_rows(remote: Any, names: set[str], manifest: BaseManifest, lance_dir: Path) -> None:
    from .keyword import build_fts

    local = import_lancedb().connect(lance_dir)
    for name in TABLES:
        if f"{name}-{manifest.commit}" in names:
            started = time.monotonic()
            rows = remote.open_table(f"{name}-{manifest.commit}").to_arrow()
            read = time.monotonic()
            table = local.create_table(name, rows)
            if name == "chunks" and rows.num_rows:
                build_fts(table)
            log.info(
                "base %s: %s copied, %d rows, %.1f MB: read %.2f s, written %.2f s",
                manifest.commit[:12], name, rows.num_rows, rows.nbytes / 1e6,
                read - started, time.monotonic() - read,
            )  # fmt: skip


def adopt_embedder(base_folder: Path, index_dir: Path) -> None:
    """The overlay embeds with the base's default model (its vectors must be comparable with
    the base's): copied over the overlay's own when they differ."""
    source = static_model_path(base_folder)
    if not source.is_file():
        return
    target = static_model_path(index_dir)
    if target.is_file() and os.path.samefile(source, target):
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_suffix(f".tmp{os.getpid()}")
    temp.unlink(missing_ok=True)
    try:  # linked, not copied (tens of MB): a model is only ever replaced whole, never edited
        os.link(source, temp)
    except OSError:  # a file system without hard links
        shutil.copyfile(source, temp)
    os.replace(temp, target)


# --- the base a process reads -------------------------------------------------------------------


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
            self._folder = folder
        except (BaseError, OSError) as exc:
            log.warning("base %s: %s; its files are missing from answers", self.uri, exc)
            self._folder = exc if isinstance(exc, BaseError) else BaseError(str(exc))
        finally:
            self._model.set()  # a failed copy: the overlay embeds with its own model

    def model(self) -> None:
        """Until the base's embedding model is the overlay's (when the base has one)."""
        self._model.wait()

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
    reason there is none (the caller says it; the local index then holds every file), or None
    without a ``base`` setting."""
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
    return found


def _open(repo: Path, config: Config, index_dir: Path, uri: str) -> OpenedBase | BaseError:
    from ..ingest.scan import scan

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
