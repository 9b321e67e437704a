"""Incremental, crash-safe indexing of one repository into its :class:`~.store.Store`.

Change detection is cheap first: a file whose size and mtime match its file row (and whose
chunk rows are all there) is not even read. Changed files are read, hashed, and re-chunked
only when their revision differs.

Crash safety rests on the write order in :meth:`Store.replace` (chunks first, the file row
last, as the commit marker) and on the checks at the start of every run: a file row whose
chunk count disagrees with the chunks table, or whose stat/revision disagrees with the disk,
is redone; chunk rows without a file row are removed at the end of the run. Every write is
idempotent, so a run killed at any point is finished by the next one with nothing lost and
nothing doubled.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent import futures
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.config import Config
from ..ingest.paths import repo_relative
from ..ingest.workers import Job, Prepared, WorkerUnavailable, prepared
from . import manifest
from .filling import VectorFiller
from .lock import IndexBusy, write_lock
from .manifest import FileStat
from .meta import MetaFile
from .passes import (
    Batch,
    IndexReport,
    IndexStatus,
    Totals,
    epoch,
    known_revision,
    pass_report,
    unchanged,
)
from .tables import said, unwritable

__all__ = ["IndexBusy", "IndexReport", "IndexStatus", "Indexer", "Progress"]

if TYPE_CHECKING:
    from ..ingest.ignore import IgnoreRules
    from ..ingest.scan import WorkspaceFile
    from .base import OpenedBase
    from .overlay import Overlay
    from .store import Meta, Store
    from .tables import FileRecord

log = logging.getLogger(__name__)


Progress = Callable[[int, int, str], None]

BATCH_CHUNKS = 4000  # chunks per write: one LanceDB add per few thousand rows, not per file
# ... and at most this many files per commit (smaller: finer crash recovery, slower cold runs).
BATCH_FILES = int(os.environ.get("CODECITE_INDEX_BATCH_FILES", "1000"))
# A run leaving this many rows outside the full-text index folds them in (brute-force search
# over them costs ~10 ms per 1000 rows per query), as do this many writes since the last time.
OPTIMIZE_UNINDEXED_ROWS = 3000
OPTIMIZE_EVERY_VERSIONS = 300
LOCK_WAIT_SECONDS = 600.0


class Indexer:
    """Builds and updates the index of ``repo``. One instance may serve several threads."""

    def __init__(self, repo: Path, config: Config) -> None:
        self.repo = repo
        self.config = config
        self.index_dir = config.resolved_index_dir(repo)
        self._store: Store | None = None
        self._vectors = VectorFiller(config, self.index_dir)
        self._ignore: IgnoreRules | None = None
        self._state = threading.Lock()  # guards the fields below, read by status()
        self._pending: set[str] = set()
        self._last_update: float | None = None

    # -- state for the server --------------------------------------------------------------

    @property
    def store(self) -> Store:
        if self._store is None:
            from .store import Store  # lazy: lancedb takes seconds to import

            self._store = Store.open(self.index_dir)
        return self._store

    @property
    def pending(self) -> frozenset[str]:
        """Files the running index pass knows need writing and has not written yet."""
        with self._state:
            return frozenset(self._pending)

    def status(self) -> IndexStatus:
        store = self._store
        if store is not None:
            files, chunks = store.file_count(), store.chunk_count()
        else:  # not opened yet (a restart): the index on disk as its last pass left it
            meta = MetaFile(self.index_dir).read()
            files, chunks = meta.files or 0, meta.chunks or 0
        embedder = self._vectors.state(store)
        with self._state:
            last_update = self._last_update
            status: IndexStatus = {
                "files_indexed": files,
                "chunks": chunks,
                "pending": len(self._pending),
                "last_update": last_update,
                "embedder": embedder,
                "meaning": self._vectors.meaning.state(),
            }
        if last_update is None:  # nothing written since this process started: the index's own
            status["last_update"] = epoch(MetaFile(self.index_dir).read().last_update)
        return status

    # -- full pass -------------------------------------------------------------------------

    def run(
        self,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        *,
        vectors: bool = True,
    ) -> IndexReport:
        """Bring the whole index up to date with the working tree. ``vectors=False``: the
        keyword side only, for a first search that cannot wait for the vectors; the pass is not
        recorded as complete, so the next run (or ``run()`` right after) fills them."""
        started = time.monotonic()
        base = self._base()  # chosen before the pass, which leaves the base's files to it
        with self._write_lock(progress):
            refused = manifest.lasting_skips(self.index_dir, self.config)
            manifest.discard(self.index_dir)  # until this pass has finished everything
            self._ignore = None  # ignore files may have changed unseen: reload them later
            totals = self._healing(
                lambda: self._full_pass(progress, cancel, refused, vectors),
                progress,
                cancel,
                vectors,
            )
        if not totals.cancelled:
            self.optimize_if_due()
            if not self._base_copied(base):
                # The copy failed after the pass left the base's files to it: the base is not
                # used now (``_base`` is None), so a second pass indexes them here.
                return self.run(progress, cancel, vectors=vectors)
        report = pass_report(self.store, started, totals)
        cancelled = totals.cancelled or (cancel is not None and cancel.is_set())  # e.g. embedding
        failed = self._vectors.state(None)["state"] == "failed"
        if totals.walked is not None and vectors and not cancelled and not failed:
            manifest.record_pass(self.index_dir, self.config, totals.walked, report)
        return report

    def _healing(
        self,
        write: Callable[[], Totals],
        progress: Progress | None,
        cancel: threading.Event | None,
        vectors: bool = True,
    ) -> Totals:
        """Run ``write``; if the index's rows cannot be read (a truncated data file, a lost
        fragment), only reading the repository again repairs them: start an empty index and
        do a full pass. A second failure is not damage and is raised."""
        try:
            return write()
        except WorkerUnavailable:
            raise  # the interpreter cannot parse anything: the index is not to blame
        except Exception as exc:
            if (environment := unwritable(exc, self.index_dir)) is not None:
                raise environment from exc
            log.warning(
                "the index in %s is damaged (%s); rebuilding it from the files",
                self.index_dir,
                said(exc),
            )
            self._store = self.store.reset()
            return self._full_pass(progress, cancel, {}, vectors)

    def _full_pass(
        self,
        progress: Progress | None,
        cancel: threading.Event | None,
        refused: Mapping[str, tuple[FileStat, str]],
        vectors: bool = True,
    ) -> Totals:
        """``refused``: files the last pass refused for a lasting reason (manifest.lasting_skips);
        those whose stat is unchanged are refused again without being read."""
        from ..ingest.scan import Skip, scan

        found = scan(self.repo, self.config)
        listed = self._beyond_base(found.files)
        # A first pass reads nothing from the index before its first write: the store (a
        # second of lancedb's imports) opens in a thread while the files are read and chunked.
        opening = None
        if self._cold():
            pool = ThreadPoolExecutor(1, thread_name_prefix="codecite-open-index")
            opening = pool.submit(lambda: self._record_cold_budget(self.store))
            pool.shutdown(wait=False)  # the opening goes on; the pass waits at its first write
        known: dict[str, FileRecord] = {}
        counts: dict[str, int] = {}
        rechunk = False
        if opening is None:
            store = self.store
            known, counts = store.files(), store.chunk_counts()
            meta = store.meta
            cut_with = meta.chunk_budget if meta.chunk_budget is not None else meta.cold_budget
            rechunk = bool(known) and cut_with != self.config.chunk_budget
            if not known:
                self._record_cold_budget(store)
        changed = [
            f
            for f in listed
            if rechunk
            or not unchanged(known.get(f.path), f.size, f.mtime_ns, counts.get(f.path, 0))
        ]
        again = [
            Skip(f.path, refused[f.path][1])
            for f in changed
            if f.path in refused and refused[f.path][0] == (f.size, f.mtime_ns, f.ctime_ns)
        ]
        skip_again = {s.path for s in again}
        todo = [f for f in changed if f.path not in skip_again]
        on_disk = {f.path for f in listed}
        if self._base_copying():  # kept until the copy is made: it may fail
            on_disk = {f.path for f in found.files}
        gone = {path for path in known if path not in on_disk}  # or now the base's
        with self._state:
            self._pending = {f.path for f in todo}
        if gone:
            self.store.delete(gone)

        totals = Totals(deleted=len(gone), skipped=[*found.skipped, *again], walked=found.files)
        batch = Batch()
        # Largest files first: the workers then end the pass on small files, finishing together.
        jobs = [
            Job(self.repo, f.path, self.config, None if rechunk else known_revision(known, f.path))
            for f in sorted(todo, key=lambda f: f.size, reverse=True)
        ]
        try:
            for done, (job, ready) in enumerate(prepared(jobs), start=1):
                if cancel is not None and cancel.is_set():
                    totals.cancelled = True
                    break
                if progress:
                    progress(done, len(todo), job.path)
                batch.add(job.path, ready, known.get(job.path), rechunk, self.config.chunk_budget)
                if batch.chunk_rows >= BATCH_CHUNKS or len(batch) >= BATCH_FILES:
                    self._commit(batch, totals, opening)
                    batch = Batch()
            self._commit(batch, totals, opening)
        finally:
            with self._state:
                self._pending.clear()  # whatever happened, this pass no longer works on them
            if opening is not None:
                futures.wait([opening])  # nothing else may open the store while the thread does
        if totals.cancelled:
            return totals  # the next run finishes the job; meta keeps the old budget
        store = self.store
        store.remove_orphans()
        meta = store.meta
        meta.chunk_budget = self.config.chunk_budget
        self._finish(store, meta, progress, cancel, vectors=vectors)
        return totals

    def _finish(
        self,
        store: Store,
        meta: Meta,
        progress: Progress | None,
        cancel: threading.Event | None,
        written: Mapping[str, str] | None = None,
        *,
        vectors: bool = True,
    ) -> None:
        """After the chunks are written: meta, the search index, vectors (of the content
        hashes ``written`` only, when the vector filler knows the rest have theirs; none
        with ``vectors=False``)."""
        meta.last_update = self._stamp(meta.last_update)
        meta.files, meta.chunks = store.file_count(), store.chunk_count()
        store.save_meta(meta)
        if progress:
            progress(1, 1, "building the search index")
        store.ensure_fts()
        # A search must work on what was written: damage is repaired here. An update's probe
        # reads one row of each table; its fill reads the vectors' hash column (a filter).
        store.probe(whole=written is None)
        self._base_model()  # the overlay embeds with the base's model, copied first
        if vectors:
            self._vectors.fill(store, progress, cancel, written)

    def optimize_if_due(self) -> bool:
        """Compact the tables and fold new rows into the indexes if enough has piled up.

        Seconds on a large index: run() calls it at its end; a server calls it when idle
        (update_paths never does, a save must stay fast). True if it optimised.
        """
        with self._write_lock(None):
            store = self.store
            drift = store.versions()["chunks"] - store.meta.optimized_version
            if store.unindexed_rows() < OPTIMIZE_UNINDEXED_ROWS and drift < OPTIMIZE_EVERY_VERSIONS:
                return False
            whole = self._vectors.whole_before_write(store)
            store.optimize()
            if whole:  # the same contents, in fewer fragments: every chunk keeps its vector
                self._vectors.still_whole(store)
            return True

    # -- a few paths (watcher, didSave) ----------------------------------------------------

    def update_paths(self, paths: Iterable[str]) -> IndexReport:
        """Re-read just these paths (repo-relative or absolute); gone or now-ignored -> deleted.

        A changed ignore file (.gitignore, .codeciteignore) can change any file's fate: then
        this is a full incremental pass.
        """
        started = time.monotonic()
        with self._write_lock(None):
            totals = self._healing(lambda: self._update(paths), None, None)
        return pass_report(self.store, started, totals)

    def _update(self, paths: Iterable[str]) -> Totals:
        store = self.store
        targets, rules_changed = self._expand(paths)
        if rules_changed:
            return self._full_pass(None, None, {})
        known = store.files(targets)  # these rows only: a save's cost is not the index's size
        whole = self._vectors.whole_before_write(store)
        batch = Batch()
        jobs = []
        indexable = {rel for rel in targets if self._indexable(rel)}
        overlay = self._overlay()
        if overlay is not None:  # a file saved back to the base's content is the base's again
            overlay.recheck(targets, indexable)
            indexable = {rel for rel in indexable if not overlay.same(rel)}
        for rel in sorted(targets):
            if rel in indexable:
                jobs.append(Job(self.repo, rel, self.config, known_revision(known, rel)))
            elif rel in known:
                batch.deletes.add(rel)
        for job, ready in prepared(jobs):  # read and chunked in a worker process
            batch.add(
                job.path, ready, known.get(job.path), rechunk=False, budget=self.config.chunk_budget
            )
        totals = Totals()
        self._commit(batch, totals)
        if len(batch):
            # hash -> text: the fill embeds these without reading them back from the table
            written = {c.content_hash: c.text for chunks in batch.chunks.values() for c in chunks}
            self._finish(store, store.meta, None, None, written if whole else None)
        return totals

    # -- a shared base (index/base.py): only files that differ from it are indexed here -----

    def _base(self) -> OpenedBase | None:
        from .base import OpenedBase, opened

        found = opened(self.repo, self.config, self.index_dir)
        return found if isinstance(found, OpenedBase) else None

    def _overlay(self) -> Overlay | None:
        base = self._base()
        return None if base is None else base.overlay

    def _base_model(self) -> None:
        base = self._base()
        self._vectors.keep_model = base is not None
        if base is not None:
            base.model()

    def _base_copied(self, base: OpenedBase | None) -> bool:
        """A pass ends with the base's copy made (its vectors were filled alongside, and a
        process that exits after the pass leaves no copy half made); False when it failed
        (said in the log)."""
        return base is None or isinstance(base.folder(), Path)

    def _base_copying(self) -> bool:
        """Whether the base in use is still being copied: this index keeps its rows of the
        base's files until then, so a copy that fails leaves nothing to index again."""
        base = self._base()
        return base is not None and base.made() is None

    def _beyond_base(self, files: list[WorkspaceFile]) -> list[WorkspaceFile]:
        """The scanned files this index must hold: all of them, or with a base in use only
        those whose content is not the base's (the mask is brought up to date first)."""
        overlay = self._overlay()
        if overlay is None:
            return files
        overlay.refresh(files)
        return [f for f in files if not overlay.same(f.path)]

    def _expand(self, paths: Iterable[str]) -> tuple[set[str], bool]:
        """Repo-relative file paths for the given paths (a folder, on disk or indexed, stands
        for the files in it), and whether one of them is an ignore file."""
        from ..ingest.scan import scan

        targets: set[str] = set()
        rules_changed = False
        for raw in paths:
            rel = self._relative(raw)
            if rel is None:
                continue
            rules_changed |= self._rules().refresh(rel)
            if (self.repo / rel).is_file():
                targets.add(rel)
                continue
            under = self.store.paths_under(rel)
            if (self.repo / rel).is_dir() or under:
                targets.update(under)
                found = scan(self.repo, self.config, under=rel, rules=self._rules())
                targets.update(f.path for f in found.files)
            else:
                targets.add(rel)
        return targets, rules_changed

    def _relative(self, raw: str) -> str | None:
        return repo_relative(raw, (str(self.repo), os.path.realpath(self.repo)))

    def _rules(self) -> IgnoreRules:
        if self._ignore is None:
            from ..ingest.ignore import IgnoreRules

            self._ignore = IgnoreRules.load(
                self.repo, index_dir=self.index_dir, trusted=self.config.repository_trusted
            )
        return self._ignore

    def _indexable(self, rel: str) -> bool:
        """A file scan() would list: present, not ignored, not a secret, not in the index."""
        return (self.repo / rel).is_file() and not self._rules().is_ignored(rel)

    # -- writing ---------------------------------------------------------------------------

    def _cold(self) -> bool:
        """No store opened yet and no tables on disk (a base's overlay excepted: choosing the
        base reads the index folder)."""
        return (
            self._store is None and not self.config.base and not (self.index_dir / "lance").exists()
        )

    def _record_cold_budget(self, store: Store) -> None:
        """Before a first pass writes: a cancelled one must not look like a budget change."""
        meta = store.meta
        meta.cold_budget = self.config.chunk_budget
        store.save_meta(meta)

    def _commit(
        self, batch: Batch, totals: Totals, opening: futures.Future[None] | None = None
    ) -> None:
        """Write one batch (once ``opening``, if any, has opened the store: what it raised is
        raised here) and count it into ``totals``."""
        if opening is not None:
            opening.result()
        if len(batch):
            self._write(batch)
        totals.files += len(batch.chunks)
        totals.chunks += batch.chunk_rows
        totals.deleted += len(batch.deletes)
        totals.skipped.extend(batch.skipped)

    def _write(self, batch: Batch) -> None:
        store = self.store
        if batch.touched:
            # The chunk rows must still be those of this revision (a crash may have left
            # another revision's rows behind); if not, the file is chunked again.
            revisions = store.chunk_revisions([record.path for record, _ in batch.touched])
            for record, source in batch.touched:
                expected = {record.revision: record.chunk_count} if record.chunk_count else {}
                if dict(revisions.get(record.path, {})) == expected:
                    batch.records.append(record)
                else:
                    batch.add_chunks(record.path, Prepared(source), self.config.chunk_budget)
        store.delete(batch.deletes)
        store.replace(batch.chunks, batch.records, batch.search_texts)
        now = time.time()
        with self._state:
            self._last_update = now
            for path in (*batch.chunks, *(r.path for r in batch.records), *batch.deletes):
                self._pending.discard(path)

    def _stamp(self, previous: str | None) -> str | None:
        """The ISO time of the last write, for meta.json."""
        with self._state:
            last = self._last_update
        if last is None:
            return previous
        return datetime.fromtimestamp(last, timezone.utc).isoformat(timespec="seconds")

    # -- the write lock --------------------------------------------------------------------

    def _write_lock(self, progress: Progress | None) -> AbstractContextManager[None]:
        return write_lock(self.index_dir, LOCK_WAIT_SECONDS, progress)
