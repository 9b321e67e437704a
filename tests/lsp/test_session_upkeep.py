"""Saves add rows outside the search indexes; once edits pause, the session folds them in."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
from lsp_helpers import FIXTURE

from codecite_lsp.index.indexer import Indexer
from codecite_lsp.service import session as session_module
from codecite_lsp.service.session import Session


def test_upkeep_runs_once_after_a_burst_of_saves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    monkeypatch.setattr(session_module, "UPKEEP_AFTER_IDLE_SECONDS", 0.3)
    calls: list[float] = []
    done = threading.Event()

    def record(self: Indexer) -> bool:
        calls.append(time.monotonic())
        done.set()
        return False

    monkeypatch.setattr(Indexer, "optimize_if_due", record)
    session = Session(repo, {"index_dir": str(tmp_path / "idx"), "embedding": "none"})
    try:
        session.index(lambda *_: None, threading.Event())
        calls.clear()
        keys = repo / "keyvault" / "keys.py"
        for n in range(3):  # a burst of saves: each pushes the upkeep back
            keys.write_text(keys.read_text() + f"\n# edit {n}\n")
            session.update(["keyvault/keys.py"])
        assert not calls, "upkeep must wait for the edits to pause"
        assert done.wait(5.0)
        time.sleep(0.5)
        assert len(calls) == 1
    finally:
        session.close()
