"""A shared base on a real S3-protocol server (moto's, on 127.0.0.1): CI publishes the index of a
commit, a teammate's `codecite` (another process, another clone) reads it and indexes only what
differs locally; a base that does not fit is refused with its reason and the local index goes
on."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

BUCKET = "codecite-bases"

FILES = {
    "kept.py": "def kept_function():\n    return 'zebraquartz lives in the base'\n",
    "changed.py": "def changed_function():\n    return 'oldmarmot was the first text'\n",
    "deleted.py": "def deleted_function():\n    return 'walrusgone is deleted locally'\n",
    "docs/notes.md": "# Notes\n\nThe ocelotnote paragraph is only in the base.\n",
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def store_env() -> Iterator[dict[str, str]]:
    """The standard AWS environment pointing at a moto server with one bucket."""
    from moto.server import ThreadedMotoServer

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {
        "AWS_ENDPOINT": f"http://127.0.0.1:{port}",
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }
    import boto3

    boto3.client(
        "s3",
        endpoint_url=env["AWS_ENDPOINT"],
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).create_bucket(Bucket=BUCKET)
    yield env
    server.stop()


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout


def _committed(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    _git(folder, "init", "-q")
    _git(folder, "add", "-A")
    _git(
        folder,
        "-c", "user.name=ci", "-c", "user.email=ci@example.invalid",
        "commit", "-q", "-m", "first",
    )  # fmt: skip
    return folder


def _codecite(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "CODECITE_EMBEDDING": "none", **env}
    return subprocess.run(
        [sys.executable, "-m", "codecite_lsp", *args, "--repo", str(repo)],
        capture_output=True,
        text=True,
        env=full,
        timeout=180,
    )


def _paths(repo: Path, env: dict[str, str], query: str) -> list[str]:
    done = _codecite(repo, env, "search", query, "--json")
    assert done.returncode == 0, done.stderr
    return [r["path"] for r in json.loads(done.stdout)["results"]]


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory, store_env: dict[str, str]) -> Path:
    """CI's checkout, whose HEAD's base was published to s3://BUCKET/team."""
    ci = _committed(tmp_path_factory.mktemp("ci") / "repo", FILES)
    done = _codecite(ci, store_env, "index", "--publish", f"s3://{BUCKET}/team")
    assert done.returncode == 0, done.stderr
    assert f"published the base of {_git(ci, 'rev-parse', 'HEAD')[:12]}" in done.stdout
    return ci


def _teammate(published: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "mine"
    subprocess.run(
        ["git", "clone", "-q", str(published), str(clone)], check=True, capture_output=True
    )
    return clone


def test_a_teammate_reads_the_base_and_indexes_only_what_differs(
    published: Path, tmp_path: Path, store_env: dict[str, str]
) -> None:
    mine = _teammate(published, tmp_path)
    (mine / "changed.py").write_text(
        "def changed_function():\n    return 'newheron replaced it'\n", encoding="utf-8"
    )
    (mine / "deleted.py").unlink()
    (mine / "added.py").write_text("def added_function():\n    return 'ibisadded'\n")
    env = {**store_env, "CODECITE_BASE": f"s3://{BUCKET}/team"}

    done = _codecite(mine, env, "index")
    assert done.returncode == 0, done.stderr
    assert "not used" not in done.stderr
    # the overlay holds the changed and the added file, nothing of the base
    assert done.stdout.startswith("indexed 2 files"), done.stdout

    # another process: the base read from its local copy, the overlay over it
    assert _paths(mine, env, "zebraquartz") == ["kept.py"]
    assert _paths(mine, env, "ocelotnote") == ["docs/notes.md"]
    assert _paths(mine, env, "newheron") == ["changed.py"]
    assert _paths(mine, env, "oldmarmot") == []  # the base's rows of the edited file: masked
    assert _paths(mine, env, "ibisadded") == ["added.py"]
    assert "deleted.py" not in _paths(mine, env, "walrusgone deleted_function")

    # edited back to the base's content: the base's rows show again, the overlay drops it
    (mine / "changed.py").write_text(FILES["changed.py"], encoding="utf-8")
    again = _codecite(mine, env, "index")
    assert again.stdout.startswith("indexed 1 files"), again.stdout
    assert _paths(mine, env, "oldmarmot") == ["changed.py"]
    assert _paths(mine, env, "newheron") == []


def test_an_unreachable_store_is_said_and_the_local_index_goes_on(
    tmp_path: Path, store_env: dict[str, str]
) -> None:
    mine = _committed(tmp_path / "repo", FILES)
    env = {
        **store_env,
        "AWS_ENDPOINT": f"http://127.0.0.1:{_free_port()}",  # nothing listens there
        "CODECITE_BASE": f"s3://{BUCKET}/team",
    }
    done = _codecite(mine, env, "index")
    assert done.returncode == 0, done.stderr
    assert f"base s3://{BUCKET}/team not used: the base store" in done.stderr
    assert "cannot be read" in done.stderr
    assert done.stdout.startswith("indexed 4 files"), done.stdout
    assert _paths(mine, env, "zebraquartz") == ["kept.py"]


def test_a_base_built_with_other_settings_is_refused_naming_the_difference(
    tmp_path: Path, store_env: dict[str, str]
) -> None:
    ci = _committed(tmp_path / "ci", FILES)
    other = {**store_env, "CODECITE_CHUNK_BUDGET": "900"}
    assert _codecite(ci, other, "index", "--publish", f"s3://{BUCKET}/small").returncode == 0
    mine = _teammate(ci, tmp_path)
    env = {**store_env, "CODECITE_BASE": f"s3://{BUCKET}/small"}
    done = _codecite(mine, env, "index")
    assert done.returncode == 0, done.stderr
    assert "was built with other settings: chunk_budget=900 (here 1800)" in done.stderr
    assert done.stdout.startswith("indexed 4 files"), done.stdout  # every file, locally


def test_no_base_of_an_ancestor_is_said(
    published: Path, tmp_path: Path, store_env: dict[str, str]
) -> None:
    unrelated = _committed(tmp_path / "other", {"x.py": "def x():\n    return 1\n"})
    env = {**store_env, "CODECITE_BASE": f"s3://{BUCKET}/team"}
    done = _codecite(unrelated, env, "index")
    assert done.returncode == 0, done.stderr
    assert "is HEAD or an ancestor of it" in done.stderr


def test_an_object_store_index_dir_is_refused_and_nothing_is_written(
    tmp_path: Path, store_env: dict[str, str]
) -> None:
    mine = _committed(tmp_path / "repo", FILES)
    done = _codecite(mine, store_env, "index", "--index-dir", f"s3://{BUCKET}/x")
    assert done.returncode == 2
    assert "index_dir must be a local folder" in done.stderr
    assert not (mine / "s3:").exists() and not (Path.cwd() / "s3:").exists()
