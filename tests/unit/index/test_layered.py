"""A base and its overlay searched as one index (index/layered.py): the base's rows of edited or
deleted files never show, the ranking is the merge of both indexes' own, and a search asks the
base once when few of its files are masked (a second, wider query doubled a search's time)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from object_store import clone, codecite, committed

from codecite_lsp.core.config import load_config
from codecite_lsp.index.layered import LayeredStore, open_index

FILES = 60
EDITED = [i for i in range(FILES) if i % 5 == 0]  # 12 files scattered through the ranking
DELETED = [7, 23, 41]


def _source(number: int) -> str:
    # A term frequency of its own in every file: no two BM25 scores tie.
    rare = " pelican" * 3 if number % 5 == 0 else " pelican" if number in (57, 58) else ""
    return f"def handler_{number}():\n    return '{'harborlight ' * (number + 1)}{rare}'\n"


@pytest.fixture(scope="module")
def layered(tmp_path_factory: pytest.TempPathFactory) -> LayeredStore:
    root = tmp_path_factory.mktemp("layered")
    ci = committed(root / "ci", {f"m{i}.py": _source(i) for i in range(FILES)})
    shared = root / "bases"
    assert codecite(ci, {}, "index", "--publish", str(shared)).returncode == 0
    mine = clone(ci, root / "mine")
    for i in EDITED:
        words = "harborlight " * (i // 5 + 1)  # no two alike either
        (mine / f"m{i}.py").write_text(f"def edited_{i}():\n    return '{words}'\n")
    for i in DELETED:
        (mine / f"m{i}.py").unlink()
    env = {"CODECITE_BASE": str(shared)}
    done = codecite(mine, env, "index")
    assert done.returncode == 0, done.stderr
    mp = pytest.MonkeyPatch()
    mp.setenv("CODECITE_BASE", str(shared))
    mp.setenv("CODECITE_EMBEDDING", "none")
    try:
        store = open_index(mine, load_config(mine))
    finally:
        mp.undo()
    assert isinstance(store, LayeredStore), store
    return store


def _expected(store: LayeredStore, query: str, limit: int) -> list[tuple[str, str, float]]:
    """Each index's whole ranking, the base's masked rows left out, merged by score."""
    base = [
        (c.path, c.text, s)
        for c, s in store.base.keyword_search(query, 1000)
        if store.mask.same(c.path)
    ]
    over = [
        (c.path, c.text, s)
        for c, s in store.overlay.keyword_search(query, 1000)
        if not store.mask.same(c.path)
    ]
    return sorted([*base, *over], key=lambda row: -row[2])[:limit]


def _counting(store: LayeredStore, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    asked: list[int] = []
    real: Callable[..., Any] = store.base.keyword_search

    def keyword_search(query: str, limit: int, paths: Any = None) -> Any:
        asked.append(limit)
        return real(query, limit, paths)

    monkeypatch.setattr(store.base, "keyword_search", keyword_search)
    return asked


def test_edited_and_deleted_files_show_their_working_tree_rows_only(
    layered: LayeredStore,
) -> None:
    found = layered.keyword_search("harborlight", 30)
    paths = [c.path for c, _ in found]
    assert len(paths) == len(set(paths)) == 30  # one chunk a file, never the base's and ours
    for chunk, _ in found:
        number = int(chunk.path[1:-3])
        assert number not in DELETED
        assert chunk.text.startswith("def edited_") == (number in EDITED), chunk.path


def test_a_search_asks_the_base_once_and_ranks_as_both_indexes_merged(
    layered: LayeredStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _counting(layered, monkeypatch)
    found = layered.keyword_search("harborlight", 10)
    assert len(asked) == 1, asked  # the masked rows among the best did not cost a second query
    assert [(c.path, c.text, s) for c, s in found] == _expected(layered, "harborlight", 10)


def test_a_query_whose_best_base_rows_are_all_masked_still_finds_the_rest(
    layered: LayeredStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _counting(layered, monkeypatch)
    found = layered.keyword_search("pelican", 2)
    # Every base file with "pelican" was edited but m57.py and m58.py, which rank below them
    # all: the base is asked again, wider, until it has them.
    assert len(asked) > 1, asked
    assert sorted(c.path for c, _ in found) == ["m57.py", "m58.py"]
    assert [(c.path, c.text, s) for c, s in found] == _expected(layered, "pelican", 2)
