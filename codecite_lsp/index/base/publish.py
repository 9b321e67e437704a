"""A commit's index published as a base: its folder packed, its model, its manifest row last."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import __version__
from ...core.config import Config
from ..embedding import minilm_cache
from ..lance_import import import_lancedb
from ..meta import SCHEMA_VERSION
from ..minilm import CHUNK_TOKENS
from ..static_embedding import static_model_path
from ..tables import said
from .copies import ended
from .layout import MANIFESTS, PACKING, BaseError, BaseManifest, connect, shaping, table_names

if TYPE_CHECKING:
    from ..store import Store


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
    if model.is_file():  # the word statistics, whichever embedder made the vectors
        blob = pa.table({"name": [model.name], "data": [model.read_bytes()]})
        db.create_table(f"embedding-{commit}", blob, mode="overwrite")
    meaning = minilm_cache(store.index_dir, CHUNK_TOKENS)
    records = meaning.records(set(store.tables.content_hashes()))
    if records:  # the semantic leg's vectors: CI embeds once, every teammate reads them
        blob = pa.table({"name": [meaning.path.name], "data": [records]})
        db.create_table(f"meaning-{commit}", blob, mode="overwrite")
    row = pa.table(
        {
            "commit": [commit],
            "created": [manifest.created],
            "header": [manifest.header()],
            "files": [json.dumps(manifest.files, sort_keys=True)],
        }
    )
    if MANIFESTS in table_names(db):
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

    from ..keyword import build_fts

    for leftover in (p for p in index_dir.iterdir() if ended(p.name)):
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
                    [pa.compress(d, codec=PACKING, asbytes=True) for d in data], pa.large_binary()
                ),
            }
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
