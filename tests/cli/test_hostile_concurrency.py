"""Two `codecite index` at once on one repository, and `kill -9` mid-index then a search and a
run over what was left (issue 42): no crash, no hang, no lost or doubled row, and a waiting or
refused run says why."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import lancedb
from corpora import write_trainable_tree


def _env() -> dict[str, str]:
    # many small commits: a kill lands between two of them
    return {
        **os.environ,
        "CODECITE_EMBEDDING": "none",
        "CODECITE_INDEX_BYPASS_MANIFEST": "1",
        "CODECITE_INDEX_BATCH_FILES": "20",
    }


def _codecite(repo: Path, *argv: str) -> list[str]:
    return [sys.executable, "-m", "codecite_lsp", *argv, "--repo", str(repo)]


def _assert_whole(repo: Path, files: int) -> None:
    """Every file's chunks once: none lost, none doubled."""
    table = lancedb.connect(repo / ".codecite" / "lance").open_table("chunks").to_arrow()
    paths, starts = table.column("path").to_pylist(), table.column("start_line").to_pylist()
    rows = list(zip(paths, starts, strict=True))
    assert len(rows) == len(set(rows))
    assert {path for path, _line in rows} == {f"module_{i}.py" for i in range(files)}


def _search(repo: Path, query: str) -> subprocess.CompletedProcess[str]:
    command = _codecite(repo, "search", query, "--json")
    return subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=60)


def test_two_index_runs_at_once_write_one_index(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    write_trainable_tree(repo, files=120, per_file=10)
    runs = [
        subprocess.Popen(
            _codecite(repo, "index"),
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    done = [(run.wait(timeout=120), *run.communicate()) for run in runs]
    for code, _out, err in done:
        assert "Traceback" not in err, err
        if code != 0:  # waited past its limit: said, with the writer's pid
            assert code == 1 and "another codecite indexer (pid " in err, err
    assert any(code == 0 for code, _out, _err in done), done
    _assert_whole(repo, 120)
    again = subprocess.run(
        _codecite(repo, "index"), env=_env(), capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 0 and "(0 written, 0 deleted" in again.stdout, again.stdout
    found = _search(repo, "handler_7_3")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["path"] == "module_7.py"


def test_kill_9_mid_index_leaves_an_index_that_opens_and_a_run_that_completes(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    write_trainable_tree(repo, files=400, per_file=10)
    run = subprocess.Popen(
        _codecite(repo, "index"), env=_env(), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    files = repo / ".codecite" / "lance" / "files.lance" / "_versions"
    deadline = time.monotonic() + 60
    while run.poll() is None and time.monotonic() < deadline:
        if files.is_dir() and len(list(files.iterdir())) >= 4:  # some files committed, not all
            break
        time.sleep(0.002)
    assert run.poll() is None  # killed mid-run, not after
    os.killpg(run.pid, signal.SIGKILL)  # the run and its workers, as an OOM killer would
    run.wait(timeout=30)
    found = _search(repo, "handler_0_1")  # what was committed is read; nothing crashes
    assert found.returncode == 0 and "Traceback" not in found.stderr, found.stderr
    assert isinstance(json.loads(found.stdout)["results"], list)
    completed = subprocess.run(
        _codecite(repo, "index"), env=_env(), capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("indexed 400 files"), completed.stdout
    assert " 0 written" not in completed.stdout  # the files the kill left out
    _assert_whole(repo, 400)
    found = _search(repo, "handler_399_9")
    assert json.loads(found.stdout)["results"][0]["path"] == "module_399.py", found.stdout
