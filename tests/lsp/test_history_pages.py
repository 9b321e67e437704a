"""``codecite/history`` pages read from the history's offset index (a real server over stdio):
a page deep in 50,000 entries holds the right entries, and so does one after another writer
appended to the log or the index was damaged. Each reply is awaited at most RawServer's usual
10 s; walking the log to offset 49,000 took 22.6 s. bench/bench_lsp_bounds.py prints the times."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsp_helpers import RawServer

COUNT = 50_000


def entry(n: int) -> str:
    answer = {"status": "refused", "trace_id": f"t{n}", "reason": "ambiguous", "detail": ""}
    time = f"2026-01-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}+00:00"  # n < 86,400
    return json.dumps({"question": f"question {n}", "time": time, "answer": answer})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".codecite").mkdir(parents=True)
    (root / "app.py").write_text("def handler(event):\n    return event\n", encoding="utf-8")
    lines = [entry(n) for n in range(COUNT)]
    lines.insert(COUNT // 2, '{"question": "a line cut by a crash"')  # skipped, not counted
    (root / ".codecite" / "history.jsonl").write_text("\n".join(lines) + "\n")
    return root


def questions(raw: RawServer, limit: int, offset: int) -> list[str]:
    page = raw.call("codecite/history", {"limit": limit, "offset": offset})["result"]
    return [item["question"] for item in page["entries"]]


def newest_first(start: int, stop: int) -> list[str]:
    return [f"question {n}" for n in range(start, stop, -1)]


def test_a_deep_page_holds_the_right_entries(raw: RawServer, project: Path):
    raw.initialize(project)
    assert questions(raw, 20, 0) == newest_first(COUNT - 1, COUNT - 21)
    assert questions(raw, 20, 49_000) == newest_first(999, 979)
    assert questions(raw, 20, COUNT - 5) == newest_first(4, -1)
    assert questions(raw, 20, COUNT) == []


def test_pages_stay_right_after_an_append_and_a_damaged_index(raw: RawServer, project: Path):
    raw.initialize(project)
    assert questions(raw, 5, 49_000) == newest_first(999, 994)
    log = project / ".codecite" / "history.jsonl"
    with log.open("a") as handle:  # another writer (the CLI) answered a question meanwhile
        handle.write(entry(COUNT) + "\n")
    assert questions(raw, 2, 0) == newest_first(COUNT, COUNT - 2)
    assert questions(raw, 5, 49_001) == newest_first(999, 994)
    index = log.with_name(log.name + ".idx")
    data = index.read_bytes()
    index.write_bytes(data[: len(data) // 2] + b"\x07" * 100)  # cut and scribbled over
    assert questions(raw, 5, 49_001) == newest_first(999, 994)
    log.write_text("\n".join(entry(n) for n in range(10)) + "\n")  # the log replaced
    assert questions(raw, 3, 2) == newest_first(7, 4)
