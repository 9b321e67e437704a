"""kill -9 of ``codecite index`` at many points: the next run ends with nothing lost or doubled.

Each kill lands right after the N-th commit to one of the tables (or at a moment in time), so
between every pair of writes of the protocol: chunks deleted / chunks added / file rows
committed, and in the search-index build at the end. The result is compared with a clean
index of the same tree.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from codecite_lsp.core.config import Config
from codecite_lsp.index.store import Store

pytestmark = pytest.mark.slow

ROWS = tuple[str, int, int, str]


def write_tree(repo: Path, files: int) -> None:
    """Python modules big enough for several chunks each, with a little markdown."""
    for i in range(files):
        folder = repo / f"pkg_{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        functions = "".join(
            f"def handler_{i}_{j}(request, limit={j}):\n"
            f'    """Handle request {i}.{j} within the rate limit."""\n'
            f"    items = [request.get(f'k{{k}}') for k in range(limit)]\n"
            f"    return sorted(item for item in items if item)  # \n\n\n"
            for j in range(14)
        )
        (folder / f"module_{i}.py").write_text(functions, encoding="utf-8")
    (repo / "README.md").write_text("# Generated\n\nA generated tree for crash tests.\n")


def index_command(repo: Path, index_dir: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "codecite_lsp",
        "index",
        "--repo",
        str(repo),
        "--index-dir",
        str(index_dir),
        "--embedding",
        "none",
    ]


def environment() -> dict[str, str]:
    # Small batches: many commits, so many distinct kill points.
    return {**os.environ, "CODECITE_INDEX_BATCH_FILES": "12", "RUST_LOG": "error"}


def versions(index_dir: Path, table: str) -> int:
    folder = index_dir / "lance" / f"{table}.lance" / "_versions"
    try:
        return sum(1 for name in os.listdir(folder) if name.endswith(".manifest"))
    except FileNotFoundError:
        return 0


def assert_no_workers_left(session: int, timeout: float = 5.0) -> None:
    """A killed indexer's chunking workers exit too (their stdin closes), never linger. The
    indexer ran in a session of its own, so its workers are told from any other process's
    (another test run's resident workers) by their session id, which survives their parent."""
    deadline = time.monotonic() + timeout
    while True:
        left = [pid for pid in os.listdir("/proc") if pid.isdigit() and _is_worker(pid, session)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not left, f"index workers outlived their parent: {left}"


def _is_worker(pid: str, session: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            if b"codecite_lsp.ingest.workers" not in handle.read():
                return False
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return int(fields[3]) == session  # after "state ppid pgrp": the session id


def start_index(repo: Path, index_dir: Path, **options: Any) -> subprocess.Popen[Any]:
    """An index run in a session of its own (its workers are told apart by it)."""
    return subprocess.Popen(
        index_command(repo, index_dir), env=environment(), start_new_session=True, **options
    )


def run_and_kill(repo: Path, index_dir: Path, table: str, commits: int) -> bool:
    """Start an index run; SIGKILL it once ``table`` has ``commits`` more versions.

    Returns True if the kill happened before the run finished on its own.
    """
    start = versions(index_dir, table)
    process = start_index(repo, index_dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while process.poll() is None and time.monotonic() < deadline:
            if versions(index_dir, table) >= start + commits:
                process.send_signal(signal.SIGKILL)
                process.wait()
                assert_no_workers_left(session=process.pid)
                return True
            time.sleep(0.002)
        return False
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def run_and_kill_after(repo: Path, index_dir: Path, seconds: float) -> None:
    process = subprocess.Popen(
        index_command(repo, index_dir),
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait()


def complete_run(repo: Path, index_dir: Path) -> str:
    done = subprocess.run(
        index_command(repo, index_dir),
        env=environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def contents(index_dir: Path) -> tuple[list[ROWS], list[tuple[str, str, int]]]:
    store = Store.open(index_dir)
    rows: list[ROWS] = []
    for path in store.files():
        for c in store.chunks_for_path(path):
            rows.append((c.path, c.start_line, c.end_line, c.content_hash))
    files = sorted((r.path, r.revision, r.chunk_count) for r in store.files().values())
    # every chunk row belongs to a file row, and none is doubled
    assert sum(store.chunk_counts().values()) == store.chunk_count() == len(rows)
    assert len(set(rows)) == len(rows)
    assert set(store.chunk_counts()) <= {path for path, _, _ in files}
    return sorted(rows), files


def clean_index(
    repo: Path, tmp_path: Path, name: str
) -> tuple[list[ROWS], list[tuple[str, str, int]]]:
    index_dir = tmp_path / name
    complete_run(repo, index_dir)
    return contents(index_dir)


def mutate(repo: Path) -> None:
    """Edits, deletions and renames for an incremental run."""
    for i in range(0, 60, 3):
        path = repo / f"pkg_{i % 7}" / f"module_{i}.py"
        path.write_text(path.read_text() + f"\n\ndef added_{i}():\n    return {i}\n")
    for i in range(1, 40, 4):
        (repo / f"pkg_{i % 7}" / f"module_{i}.py").unlink()
    for i in range(2, 40, 8):
        source = repo / f"pkg_{i % 7}" / f"module_{i}.py"
        source.rename(repo / f"pkg_{i % 7}" / f"renamed_{i}.py")


def test_kill_at_many_points_then_rerun_matches_a_clean_index(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_tree(repo, 240)
    index_dir = tmp_path / "killed"
    assert Config().chunk_budget  # the CLI uses the default budget for both indexes

    kills = 0
    # cold run: killed after the 1st, 2nd, 3rd ... chunk or file commits, resumed each time
    for table, commits in [("chunks", 1), ("chunks", 2), ("files", 1), ("chunks", 5),
                           ("files", 3), ("chunks", 4)]:  # fmt: skip
        kills += run_and_kill(repo, index_dir, table, commits)
    assert kills >= 4  # most kills landed mid-run (a run may finish first on a fast machine)
    run_and_kill_after(repo, index_dir, 4.0)  # maybe inside the search-index build
    complete_run(repo, index_dir)
    assert contents(index_dir) == clean_index(repo, tmp_path, "clean-1")

    # incremental run with edits, deletions and renames, killed mid-way twice
    mutate(repo)
    kills = sum(
        run_and_kill(repo, index_dir, table, commits)
        for table, commits in [("chunks", 1), ("files", 1), ("chunks", 3)]
    )
    assert kills >= 2
    summary = complete_run(repo, index_dir)
    assert "indexed" in summary
    assert contents(index_dir) == clean_index(repo, tmp_path, "clean-2")

    # and a run over an index that is already complete writes nothing
    assert "(0 written, 0 deleted" in complete_run(repo, index_dir)


def test_kill_during_a_rechunk_for_a_new_budget(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_tree(repo, 120)
    index_dir = tmp_path / "killed"
    complete_run(repo, index_dir)
    (repo / ".codecite.toml").write_text("chunk_budget = 400\n")
    kills = sum(run_and_kill(repo, index_dir, "chunks", commits) for commits in (1, 2, 4))
    assert kills >= 2
    complete_run(repo, index_dir)
    clean = tmp_path / "clean"
    complete_run(repo, clean)
    assert contents(index_dir) == contents(clean)
    shutil.rmtree(clean)


def test_ctrl_c_stops_the_run_in_one_line_and_the_next_run_finishes_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_tree(repo, 240)
    index_dir = tmp_path / "interrupted"
    # Ctrl-C in a terminal: SIGINT to the whole process group, the workers included.
    process = start_index(
        repo,
        index_dir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while versions(index_dir, "files") < 2 and process.poll() is None:  # 1: made, 2: written
        assert time.monotonic() < deadline
        time.sleep(0.002)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    if process.returncode == 0:
        pytest.fail("the run finished before Ctrl-C reached it: make the tree larger")
    assert process.returncode == 130, err
    assert err.strip() == (
        "codecite: interrupted; what was indexed is kept, and the next run goes on from there"
    ), err  # one line: no traceback from the indexer nor from any worker
    assert_no_workers_left(session=process.pid)

    summary = complete_run(repo, index_dir)
    written = int(summary.split("(")[1].split(" written")[0])
    assert written < 241, summary  # what was committed before Ctrl-C was not written again
    assert contents(index_dir) == clean_index(repo, tmp_path, "clean")
