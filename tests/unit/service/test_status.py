"""codecite/status of one root, from an index on disk that was never opened by this process."""

from __future__ import annotations

import json
from pathlib import Path

from codecite_lsp.service.session import Session
from codecite_lsp.service.status import status


def test_a_hand_edited_meta_json_is_answered_not_raised(tmp_path: Path) -> None:
    repo, index = tmp_path / "repo", tmp_path / "idx"
    repo.mkdir()
    index.mkdir()
    (index / "meta.json").write_text(json.dumps({"files": "many", "chunks": 3}), "utf-8")
    session = Session(repo, {"index_dir": str(index), "embedding": "none"})
    try:
        root = status(session.upkeep)
    finally:
        session.close()
    # A badly typed meta.json is not trusted at all (index/meta.py: the next pass rebuilds), so
    # neither of its counts is shown; before, the reply model raised on "many".
    assert root.files_indexed == 0 and root.chunks == 0 and root.root == str(repo)
    assert root.embedder.name == "none"
