"""A base chosen on the store (the newest of an ancestor of HEAD) and copied locally once."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from ...core.config import Config
from ..embedding import minilm_cache
from ..lance_import import import_lancedb
from ..meta import Meta, MetaFile
from ..minilm import CHUNK_TOKENS
from ..static_embedding import static_model_path
from ..tables import said, sql_literal
from .copies import Removed, hold, prune, sizes
from .git import ancestors
from .layout import MANIFESTS, PACKING, BaseError, BaseManifest, connect, differences, table_names

log = logging.getLogger(__name__)


def choose(uri: str, repo: Path, config: Config) -> BaseManifest:
    """The newest base on the store whose commit is HEAD or an ancestor of it, with its file
    list; BaseError (in plain words) when the store cannot be read, none fits, or the nearest
    one was built with other settings."""
    try:
        db = connect(uri)
        if MANIFESTS not in table_names(db):
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
    then unpacked, its chunk count checked against the manifest. A folder is complete only once
    renamed into place.
    """
    folder = cache_root / manifest.commit
    if hold(folder):
        return folder, Removed()
    temp = cache_root / f".{manifest.commit}.tmp{os.getpid()}.{threading.get_ident()}"
    try:
        remote = connect(uri)
        names = table_names(remote)
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
        _copy_folder(remote, manifest, temp / "lance")
        if f"meaning-{manifest.commit}" in names:  # the semantic leg's vectors
            blob = remote.open_table(f"meaning-{manifest.commit}").to_arrow().to_pylist()[0]
            vectors = temp / "embedding" / Path(blob["name"]).name
            vectors.parent.mkdir(parents=True, exist_ok=True)
            vectors.write_bytes(blob["data"])
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
    copy = {
        "header": manifest.header(),
        "files": json.dumps(manifest.files, sort_keys=True),
        "sizes": sizes(temp),
    }
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
        body = pa.decompress(data[number].as_buffer(), size, codec=PACKING)
        with target.open("wb") as handle:
            handle.write(body)


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


def adopt_meaning(base_folder: Path, index_dir: Path) -> None:
    """The base's semantic-leg vectors join the overlay's cache (search reads that one): the
    overlay then embeds only the chunks of files that differ from the base."""
    cache = minilm_cache(index_dir, CHUNK_TOKENS)
    source = base_folder / "embedding" / cache.path.name
    if source.is_file():
        log.info("base: %d semantic-search vectors taken", cache.merge(source))


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
