"""What retrieval hands on must be what the files hold now (retrieve/on_disk.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from record_helpers import result as make

from codecite_lsp.core.config import Config
from codecite_lsp.core.records import Result, file_revision
from codecite_lsp.retrieve.on_disk import holds, index_differs, on_disk

FILE = (
    "import os\n\ndef rotate_key(store):\n    store.revoke(store.current)\n"
    "    return store.issue()\n"
)


def result(start: int, end: int, text: str, path: str = "keys.py", revision: str = "") -> Result:
    return make(path, start, end, text, symbol="rotate_key", revision=revision)


@pytest.mark.parametrize(
    "file_text",
    [FILE, FILE.replace("\n", "\r\n"), FILE.rstrip("\n")],
    ids=["lf", "crlf", "no final newline"],
)
def test_the_lines_a_result_names_hold_its_text(file_text: str) -> None:
    body = "def rotate_key(store):\n    store.revoke(store.current)\n    return store.issue()\n"
    assert holds(file_text, result(3, 5, body).chunk)
    assert holds(file_text, result(3, 5, body.rstrip("\n")).chunk)
    assert holds(file_text, result(4, 4, "    store.revoke(store.current)").chunk)


@pytest.mark.parametrize(
    "place",
    [
        (4, 4, "    store.revoke(store.previous)"),  # edited since
        (3, 4, "    store.revoke(store.current)\n    return store.issue()\n"),  # moved down
        (5, 6, "    return store.issue()\nprint()\n"),  # past the end
        (4, 5, "    store.revoke(store.current)\n"),  # one line short of its range
        (0, 0, ""),
    ],
    ids=["edited", "moved", "past the end", "range and text disagree", "no line"],
)
def test_any_other_text_or_place_does_not_hold(place: tuple[int, int, str]) -> None:
    assert not holds(FILE, result(*place).chunk)


def test_a_lone_carriage_return_is_part_of_its_line_as_the_chunker_reads_it() -> None:
    assert holds("a = 1\rb = 2\nc = 3\n", result(1, 2, "a = 1\rb = 2\nc = 3\n").chunk)


def test_left_out_results_say_whether_the_file_changed_or_the_index_is_wrong(
    tmp_path: Path,
) -> None:
    (tmp_path / "keys.py").write_text(FILE)
    current = file_revision(FILE.encode())
    good = result(4, 4, "    store.revoke(store.current)", revision=current)
    stale = result(4, 4, "    store.revoke(old)", revision="an older revision")
    gone = result(1, 1, "x = 1", path="deleted.py")

    checked = on_disk(tmp_path, Config(), [stale, good, gone])
    assert checked.kept == [good] and checked.left == [stale, gone] and not checked.forged
    assert "changed since it was indexed (keys.py:4-4, deleted.py:1-1)" in index_differs(checked)

    forged = result(4, 4, "    pass  # keys are never revoked", revision=current)
    checked = on_disk(tmp_path, Config(), [forged])
    assert checked.kept == [] and checked.forged
    assert "the index folder was edited or copied from elsewhere" in index_differs(checked)
