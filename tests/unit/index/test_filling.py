"""A saved file's vectors (index/filling.py): an update embeds what it wrote, the status count
follows the index, and whatever breaks "every other chunk has its vector" makes the next save
fill the whole index again."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpora import write_trainable_tree

from codecite_lsp.core.config import Config
from codecite_lsp.index.indexer import Indexer
from codecite_lsp.index.store import Store


@pytest.fixture
def indexed(tmp_path: Path) -> Indexer:
    write_trainable_tree(tmp_path)
    ix = Indexer(tmp_path, Config(chunk_budget=200))  # one chunk per function; static embedder
    ix.run()
    assert ix.status()["embedder"]["state"] == "ready"
    return ix


def _distinct(ix: Indexer) -> int:
    return len(ix.store.missing_vectors("no-such-embedder", 10**6))  # one text per content


def _missing(ix: Indexer) -> list[tuple[str, str]]:
    assert ix._vectors.embedder is not None
    return ix.store.missing_vectors(ix._vectors.embedder.name, 10**6)


def test_a_saved_file_gets_vectors_and_status_counts_them(indexed: Indexer) -> None:
    ix, repo = indexed, indexed.repo
    before = ix.status()["embedder"]["vectors"]
    assert before == _distinct(ix) == 144
    (repo / "audit.py").write_text("def audit_rotation(log):\n    return log.rotated()\n")
    ix.update_paths(["audit.py"])
    assert _missing(ix) == []  # the new file's chunk has its vector
    assert ix.status()["embedder"]["vectors"] == _distinct(ix) == 145
    (repo / "module_5.py").unlink()
    ix.update_paths(["module_5.py"])
    assert ix.status()["embedder"]["vectors"] == _distinct(ix) < 144  # the gone ones not counted


def test_a_restarted_indexer_fills_a_save_and_counts_right(indexed: Indexer) -> None:
    repo = indexed.repo
    ix = Indexer(repo, Config(chunk_budget=200))  # a new process: knows only what is on disk
    (repo / "audit.py").write_text("def audit_rotation(log):\n    return log.rotated()\n")
    ix.update_paths(["audit.py"])
    assert _missing(ix) == []
    assert ix.status()["embedder"]["vectors"] == _distinct(ix) == 145


@pytest.mark.parametrize("restarted", [False, True])
def test_a_save_after_the_vectors_were_dropped_elsewhere_refills_them_all(
    indexed: Indexer, restarted: bool
) -> None:
    ix, repo = indexed, indexed.repo
    other = Store.open(ix.index_dir)  # another process (a CLI run) found them damaged
    other.vectors.drop(RuntimeError("damaged"))
    if restarted:
        ix = Indexer(repo, Config(chunk_budget=200))
    with open(repo / "module_3.py", "a") as handle:
        handle.write("\n# saved\n")
    ix.update_paths(["module_3.py"])
    assert _missing(ix) == []  # every chunk, not only the saved file's
    assert ix.status()["embedder"]["vectors"] == _distinct(ix) == 144


def test_a_save_heals_a_truncated_vectors_data_file(indexed: Indexer) -> None:
    ix, repo = indexed, indexed.repo
    for path in (ix.index_dir / "lance" / "vectors.lance" / "data").glob("*.lance"):
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with open(repo / "module_3.py", "a") as handle:
        handle.write("\n# saved\n")
    ix.update_paths(["module_3.py"])
    assert _missing(ix) == []
    assert ix.status()["embedder"]["vectors"] == _distinct(ix) == 144


def test_a_cancelled_fill_is_finished_by_the_next_save(tmp_path: Path) -> None:
    import threading

    write_trainable_tree(tmp_path)
    ix = Indexer(tmp_path, Config(chunk_budget=200))
    cancel = threading.Event()

    def progress(done: int, total: int, what: str) -> None:
        if what == "training the default embedding":
            cancel.set()  # the editor closed: trained, no vector written yet

    ix.run(progress, cancel)
    assert ix.status()["embedder"]["vectors"] == 0
    with open(tmp_path / "module_3.py", "a") as handle:
        handle.write("\n# saved\n")
    ix.update_paths(["module_3.py"])
    assert _missing(ix) == []
    assert ix.status()["embedder"]["vectors"] == _distinct(ix) == 144


def test_vectors_that_could_not_be_read_for_want_of_memory_are_kept(indexed: Indexer) -> None:
    other = Store.open(indexed.index_dir)
    other.vectors.drop(MemoryError())  # a search that ran out of memory reading them
    assert other.vectors.drops == 0
    assert _missing(indexed) == []  # nothing to compute again
    assert indexed.status()["embedder"]["vectors"] == 144
