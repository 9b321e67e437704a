"""The index of one root kept current: saves add rows outside the search indexes and, once edits
pause, the upkeep folds them in; settings that move the index re-point it."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
from lsp_helpers import FIXTURE

from codecite_lsp.index.indexer import Indexer
from codecite_lsp.service import upkeep as upkeep_module
from codecite_lsp.service.session import Session
from codecite_lsp.service.status import status


def test_upkeep_runs_once_after_a_burst_of_saves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    # Longer than one save takes on a loaded machine (0.3 s was seen), so the burst stays a burst.
    monkeypatch.setattr(upkeep_module, "UPKEEP_AFTER_IDLE_SECONDS", 1.5)
    calls: list[float] = []
    done = threading.Event()

    def record(self: Indexer) -> bool:
        calls.append(time.monotonic())
        done.set()
        return False

    monkeypatch.setattr(Indexer, "optimize_if_due", record)
    session = Session(repo, {"index_dir": str(tmp_path / "idx"), "embedding": "none"})
    try:
        session.upkeep.index(lambda *_: None, threading.Event())
        calls.clear()
        keys = repo / "keyvault" / "keys.py"
        for n in range(3):  # a burst of saves: each pushes the upkeep back
            keys.write_text(keys.read_text() + f"\n# edit {n}\n")
            session.upkeep.update(["keyvault/keys.py"])
        assert not calls, "upkeep must wait for the edits to pause"
        assert done.wait(10.0)
        time.sleep(2.0)
        assert len(calls) == 1
    finally:
        session.close()


def test_a_new_index_dir_is_what_status_and_the_next_pass_use(tmp_path: Path) -> None:
    """Settings that move the index re-point the upkeep: status no longer counts the old index,
    and the next pass fills the new one (the old one is left as it was)."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    first, second = tmp_path / "first", tmp_path / "second"
    session = Session(repo, {"index_dir": str(first), "embedding": "none"})
    try:
        session.upkeep.index(lambda *_: None, threading.Event())
        indexed = status(session.upkeep).files_indexed
        assert indexed > 0
        assert session.reconfigure({"index_dir": str(second), "embedding": "none"}) is True
        assert status(session.upkeep).files_indexed == 0
        session.upkeep.index(lambda *_: None, threading.Event())
        assert status(session.upkeep).files_indexed == indexed
        assert (second / "meta.json").is_file() and session.index_dir == second
    finally:
        session.close()


def test_a_setting_that_keeps_the_index_keeps_the_indexer(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    settings = {"index_dir": str(tmp_path / "idx"), "embedding": "none"}
    session = Session(repo, settings)
    try:
        indexer = session.upkeep.indexer
        assert session.reconfigure({**settings, "hover": False}) is False
        assert session.upkeep.indexer is indexer and session.upkeep.config.hover is False
    finally:
        session.close()


def test_searches_and_answers_share_one_retriever_until_a_setting_changes(tmp_path: Path) -> None:
    """One retriever for both: the prior's graph (seconds and a gigabyte at a million chunks)
    is computed once, and a retrieval setting reaches searches and answers alike."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    settings = {"index_dir": str(tmp_path / "idx"), "embedding": "none"}
    session = Session(repo, settings)
    try:
        session.upkeep.index(lambda *_: None, threading.Event())
        retriever = session.retriever
        assert session.answerer.retriever is retriever
        assert session.reconfigure({**settings, "candidates": 12}) is False
        assert session.retriever is not retriever
        assert session.retriever.config.candidates == 12
        assert session.answerer.retriever is session.retriever
    finally:
        session.close()
