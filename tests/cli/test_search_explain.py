"""`codecite search --explain` (what ranked each result: terms that add up to its score) and
`--queries FILE` (many queries, one index open, one JSON line each), as a script runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codecite_lsp.core.config import Config
from codecite_lsp.index.indexer import Indexer

ROOT = Path(__file__).parents[2]
QUERIES = ["retired key grace period", "rotate_key", "how are keys revoked"]


def search(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codecite_lsp", "search", *args, "--repo", str(repo)],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=180,
        env={**os.environ, "PYTHONPATH": str(ROOT), "CODECITE_EMBEDDING": "none"},
    )


@pytest.fixture
def indexed(repo: Path) -> Path:
    Indexer(repo, Config(embedding="none")).run()
    return repo


def test_explained_terms_add_up_to_the_score_shown(indexed: Path) -> None:
    done = search(indexed, "rotate_key retired", "--json", "--explain", "--limit", "5")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    assert results
    for result in results:
        assert result["terms"], result["path"]
        assert sum(result["terms"].values()) == pytest.approx(result["score"], abs=1e-9)
    # the keyword search found the first result: its share is named
    assert results[0]["terms"]["keyword"] > 0

    text = search(indexed, "rotate_key retired", "--explain", "--limit", "5")
    lines = text.stdout.splitlines()
    assert len(lines) == 2 * len(results)  # each result, then its terms
    shown = [float(value) for value in lines[1].split()[1::2]]
    assert sum(shown) == pytest.approx(float(lines[0].rsplit("(", 1)[1].rstrip(")")), abs=0.01)
    # without --explain the contract's shape is unchanged
    plain = json.loads(search(indexed, "rotate_key retired", "--json").stdout)["results"]
    assert "terms" not in plain[0]


def test_a_file_of_queries_answers_one_json_line_each(indexed: Path, tmp_path: Path) -> None:
    queries = tmp_path / "queries.txt"
    queries.write_text("\n".join([QUERIES[0], "", *QUERIES[1:]]) + "\n")
    done = search(indexed, "--queries", str(queries), "--json", "--limit", "4")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["query"] for line in lines] == QUERIES  # blank lines skipped, order kept
    for line in lines:
        alone = json.loads(search(indexed, line["query"], "--json", "--limit", "4").stdout)
        assert line["results"] == alone["results"]  # the same as one query at a time
    from_stdin = search(indexed, "--queries", "-", "--json", "--limit", "4", stdin=QUERIES[1])
    assert [json.loads(line)["query"] for line in from_stdin.stdout.splitlines()] == QUERIES[1:2]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--queries", "missing.txt"], "cannot read missing.txt"),
        (["rotate_key", "--queries", "q.txt"], "not both"),
        ([], "give a query"),
        (["   "], "the query is empty"),
    ],
)
def test_bad_queries_are_refused_clearly(indexed: Path, args: list[str], said: str) -> None:
    done = search(indexed, *args, "--json")
    assert done.returncode == 2 and said in done.stderr and not done.stdout
