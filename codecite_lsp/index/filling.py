"""The vectors behind one :class:`~.indexer.Indexer`'s keyword index: filling them after each
write, and the embedder's state for status.

A saved file must cost what it changed, not a read of every chunk's and every vector's hash
(~150 ms on the stdlib's 29k chunks). So once a fill has left every chunk with a vector, the
filler remembers it (:class:`_Whole`) and the next update embeds only the content hashes it
wrote, read by a filter. That knowledge is dropped, and the next fill covers the whole index
again, whenever it may no longer hold: a vectors table dropped as damaged, another embedder
name (a retrain), a table version this process did not write (another process, optimize),
an untrained embedder or a cancelled fill. It is kept in ``vectors-whole.json`` too, so a
restarted server's first save is as cheap (versions it did not write never match). The live
vector count for status is read only when status asks after a change.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.files import read_regular
from .passes import EmbedderState

if TYPE_CHECKING:
    from ..core.config import Config
    from .embedder import Embedder
    from .minilm import VectorCache
    from .store import Store

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]
MARK = "vectors-whole.json"


@dataclass(frozen=True)
class _Whole:
    """The index as a fill left it with a vector for every chunk."""

    store: int  # id() of the Store: a reset index is another one
    drops: int  # its vectors tables dropped as damaged
    embedder: str
    versions: tuple[tuple[str, int], ...]  # table versions (chunks, files, vectors)

    @classmethod
    def now(cls, store: Store, embedder: str) -> _Whole:
        return cls(id(store), store.vector_drops, embedder, tuple(sorted(store.versions().items())))

    def save(self, index_dir: Path) -> None:
        """For the next process (atomic: temp file + rename; a failure only costs it a scan)."""
        text = json.dumps({"embedder": self.embedder, "versions": dict(self.versions)})
        temp = index_dir / f"{MARK}.tmp{os.getpid()}.{threading.get_ident()}"
        with contextlib.suppress(OSError):
            temp.write_text(text, encoding="utf-8")
            os.replace(temp, index_dir / MARK)

    @classmethod
    def saved(cls, store: Store) -> _Whole | None:
        """What a previous process saved, as if this one had filled (None: nothing usable)."""
        try:
            raw = json.loads(read_regular(store.index_dir / MARK)[0].decode("utf-8"))
            versions = tuple(sorted((str(k), int(v)) for k, v in raw["versions"].items()))
            return cls(id(store), store.vector_drops, str(raw["embedder"]), versions)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None


class VectorFiller:
    """Thread-safe: status() may read while the indexer's thread fills."""

    def __init__(self, config: Config, index_dir: Path) -> None:
        self.config = config
        self.index_dir = index_dir
        self.embedder: Embedder | None = None
        # Over a base the default model is the base's (copied in): never retrained here.
        self.keep_model = False
        self._lock = threading.Lock()  # guards the fields below
        self._state: EmbedderState = {
            "name": config.embedding,
            "state": "off" if config.embedding == "none" else "idle",
            "vectors": 0,
            "error": "",
        }
        self.meaning = MeaningFiller(config, index_dir)
        self._whole: _Whole | None = None
        self._uncounted = 0  # > 0: "vectors" is stale; bumped by each fill that wrote
        self._counting: str | None = None  # the embedder whose vectors status counts

    def state(self, store: Store | None) -> EmbedderState:
        """The embedder's state; its vector count read now if a fill changed it since."""
        with self._lock:
            stale, name = self._uncounted, self._counting
        if stale and store is not None and name is not None:
            vectors = store.vector_count(name)
            with self._lock:
                if self._uncounted == stale:  # no fill since this count began
                    self._state["vectors"], self._uncounted = vectors, 0
        with self._lock:
            return self._state.copy()

    def whole_before_write(self, store: Store) -> bool:
        """Before an update writes: may its fill embed only what it writes?"""
        whole = self._whole or _Whole.saved(store)
        if whole is None or self._make_embedder() is None:
            return False
        assert self.embedder is not None
        return whole == _Whole.now(store, self.embedder.name)

    def still_whole(self, store: Store) -> None:
        """A write that changed no content (optimize) keeps every chunk's vector."""
        if self.embedder is not None and self._whole is not None:
            self._record(store, self.embedder.name)

    def _make_embedder(self) -> Embedder | None:
        if self.embedder is None and self.config.embedding != "none":
            from .embedding import make_embedder

            self.embedder = make_embedder(self.config, self.index_dir)
        return self.embedder

    def _record(self, store: Store, name: str) -> None:
        self._whole = _Whole.now(store, name)
        self._whole.save(self.index_dir)

    def fill(
        self,
        store: Store,
        progress: Progress | None,
        cancel: threading.Event | None,
        written: Collection[str] | None = None,
    ) -> None:
        """The embedder's vectors (seconds), then the semantic leg's (minutes, code first);
        keyword search already works, so a failure here only degrades."""
        self._fill_embedder(store, progress, cancel, written)
        self.meaning.fill(store, progress, cancel, written)

    def _fill_embedder(
        self,
        store: Store,
        progress: Progress | None,
        cancel: threading.Event | None,
        written: Collection[str] | None,
    ) -> None:
        """Embed new chunks (only the content hashes ``written`` when the index was whole
        before the write)."""
        if self.config.embedding == "none":
            return
        try:
            from .embedding import fill_vectors, train_words

            if self._make_embedder() is None:
                return
            assert self.embedder is not None
            self._whole = None  # until this fill has finished
            self._set("embedding")
            if not self.keep_model:
                train_words(store, self.embedder, self.index_dir, progress)
            if written is not None and self._fill_written(store, written, cancel):
                return
            fill_vectors(store, self.embedder, progress, cancel, train=not self.keep_model)
            name = self.embedder.name
            vectors, hashes = store.vector_coverage(name)
            with self._lock:
                self._state["vectors"], self._uncounted, self._counting = vectors, 0, name
            # No vectors yet (e.g. too few chunks to train the default embedder): not "ready".
            self._set("ready" if vectors else "idle")
            if vectors == hashes and not (cancel is not None and cancel.is_set()):
                self._record(store, name)
        except Exception as exc:  # model/network trouble: keep the keyword index usable
            log.warning("embedding failed: %s", exc)
            self._set("failed", error=str(exc))

    def _fill_written(
        self, store: Store, written: Collection[str], cancel: threading.Event | None
    ) -> bool:
        """Fill the vectors of ``written`` only; False if the index is not whole afterwards
        (a drop, a retrain, an untrained model, cancelled): then everything is filled."""
        from .embedding import fill_vectors
        from .static_embedding import StaticEmbedder

        assert self.embedder is not None
        name, drops = self.embedder.name, store.vector_drops
        fill_vectors(store, self.embedder, None, cancel, among=written, train=not self.keep_model)
        if (
            self.embedder.name != name
            or store.vector_drops != drops
            or (cancel is not None and cancel.is_set())
            or (isinstance(self.embedder, StaticEmbedder) and self.embedder.model is None)
        ):
            return False
        with self._lock:
            self._uncounted += 1
            self._counting = name
        self._set("ready" if store.chunk_count() else "idle")
        self._record(store, name)
        return True

    def _set(self, state: str, *, error: str = "") -> None:
        with self._lock:
            self._state["state"] = state
            self._state["error"] = error


class MeaningFiller:
    """The semantic leg's vectors (``meaning = "minilm"``) behind the keyword index, into the
    content-hash cache search reads (:mod:`..retrieve.meaning`): every chunk lacking one after
    a full pass, the hashes a save wrote after an update. Thread-safe like VectorFiller."""

    def __init__(self, config: Config, index_dir: Path) -> None:
        self.index_dir = index_dir
        self.on = config.meaning == "minilm"
        self._cache: VectorCache | None = None
        self._lock = threading.Lock()
        self._state: EmbedderState = {
            "name": "none",
            "state": "idle" if self.on else "off",
            "vectors": 0,
            "error": "",
        }

    def state(self) -> EmbedderState:
        with self._lock:
            return self._state.copy()

    def fill(
        self,
        store: Store,
        progress: Progress | None,
        cancel: threading.Event | None,
        written: Collection[str] | None,
    ) -> None:
        if not self.on:
            return
        from .embedding import fill_meaning, minilm_cache
        from .minilm import CHUNK_TOKENS

        if self._cache is None:
            self._cache = minilm_cache(self.index_dir, CHUNK_TOKENS)
        cache = self._cache
        self._set(name=cache.name, state="embedding", error="")
        try:
            if written is None:  # a full pass: count what the index's chunks already have
                contents = list(dict.fromkeys(store.tables.content_hashes()))
                self._set(vectors=len(contents) - len(cache.lacking(contents)))
            held = self.state()["vectors"]

            def counted(done: int, total: int, what: str) -> None:
                self._set(vectors=held + done)
                if progress:
                    progress(done, total, what)

            fill_meaning(store, cache, counted, cancel, written)
            self._set(state="idle" if cancel is not None and cancel.is_set() else "ready")
        except Exception as exc:  # the model cannot run: search goes on without the leg
            log.warning("semantic search vectors not written: %s", exc)
            self._set(state="failed", error=str(exc))

    def _set(
        self,
        *,
        name: str | None = None,
        state: str | None = None,
        vectors: int | None = None,
        error: str | None = None,
    ) -> None:
        with self._lock:
            if name is not None:
                self._state["name"] = name
            if state is not None:
                self._state["state"] = state
            if vectors is not None:
                self._state["vectors"] = vectors
            if error is not None:
                self._state["error"] = error
