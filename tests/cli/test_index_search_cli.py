"""`codecite index` and `codecite search` as a user runs them: one summary line, waiting for an
indexer that holds the lock, the JSON shape of a search."""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from codecite_lsp.core.config import Config
from codecite_lsp.index.indexer import Indexer

SUMMARY = re.compile(  # the contract's one summary line (docs/contracts.md)
    r"^indexed (\d+) files, (\d+) chunks in [\d.]+ s "
    r"\((\d+) written, (\d+) deleted, (\d+) skipped\)( - unchanged since the last pass)?$"
)


def test_cli_prints_one_summary_line(repo: Path) -> None:
    env = {**os.environ, "CODECITE_EMBEDDING": "none"}
    command = [sys.executable, "-m", "codecite_lsp", "index", "--repo", str(repo)]
    first = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.strip().splitlines()
    assert len(lines) == 1 and SUMMARY.match(lines[0]), first.stdout
    assert "skipped .env" in first.stderr
    second = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert SUMMARY.match(second.stdout.strip())
    assert "(0 written, 0 deleted" in second.stdout


def test_the_cli_waits_for_a_running_indexer(repo: Path) -> None:
    Indexer(repo, Config(embedding="none")).run()
    (repo / "late.py").write_text("def written_while_locked(): pass\n")
    held = open(repo / ".codecite" / "index.lock", "a+")  # noqa: SIM115 - released by the timer
    fcntl.flock(held, fcntl.LOCK_EX)
    release = threading.Timer(3.0, held.close)  # closing the file releases the lock
    release.start()
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "codecite_lsp", "index", "--repo", str(repo)],
        capture_output=True,
        text=True,
        env={**os.environ, "CODECITE_EMBEDDING": "none"},
        timeout=120,
    )
    release.join()
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started >= 3.0
    assert "(1 written, 0 deleted" in done.stdout


def test_cli_search_json_shape(repo: Path) -> None:
    Indexer(repo, Config()).run()
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "codecite_lsp",
            "search",
            "retired key grace period",
            "--json",
            "--limit",
            "3",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    payload = json.loads(completed.stdout)
    assert list(payload) == ["results"] and 1 <= len(payload["results"]) <= 3
    for item in payload["results"]:
        assert set(item) == {
            "path",
            "start_line",
            "end_line",
            "symbol",
            "score",
            "content_hash",
            "text",
            "untrusted",
        }
        assert item["untrusted"] == []  # ordinary code
        lines = (repo / item["path"]).read_text().splitlines()
        assert "\n".join(lines[item["start_line"] - 1 : item["end_line"]]) == item["text"].rstrip(
            "\n"
        )
    assert "keyvault/keys.py" in {item["path"] for item in payload["results"]}
    assert ".env" not in {item["path"] for item in payload["results"]}
