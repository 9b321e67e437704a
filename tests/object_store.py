"""A real S3-protocol server for the shared-base tests: moto's, on 127.0.0.1, with one bucket,
and the small committed repositories the tests publish and clone."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUCKET = "codecite-bases"

FILES = {
    "kept.py": "def kept_function():\n    return 'zebraquartz lives in the base'\n",
    "changed.py": "def changed_function():\n    return 'oldmarmot was the first text'\n",
    "deleted.py": "def deleted_function():\n    return 'walrusgone is deleted locally'\n",
    "docs/notes.md": "# Notes\n\nThe ocelotnote paragraph is only in the base.\n",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def store_env(port: int) -> dict[str, str]:
    """The standard AWS environment LanceDB reads, pointing at the local server."""
    return {
        "AWS_ENDPOINT": f"http://127.0.0.1:{port}",
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }


@contextmanager
def s3_server(port: int) -> Iterator[dict[str, str]]:
    """moto's server on ``port`` with BUCKET made; yields the environment that reaches it."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = store_env(port)
    try:
        boto3.client(
            "s3",
            endpoint_url=env["AWS_ENDPOINT"],
            region_name=env["AWS_REGION"],
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        ).create_bucket(Bucket=BUCKET)
        yield env
    finally:
        server.stop()


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout


def committed(folder: Path, files: dict[str, str]) -> Path:
    """A new git repository holding ``files`` in one commit."""
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(
        folder,
        "-c", "user.name=ci", "-c", "user.email=ci@example.invalid",
        "commit", "-q", "-m", "first",
    )  # fmt: skip
    return folder


def clone(source: Path, target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(source), str(target)], check=True, timeout=60)
    return target


def codecite(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI in a process of its own (keyword-only: small repositories stay fast)."""
    full = {**os.environ, "CODECITE_EMBEDDING": "none", **env}
    return subprocess.run(
        [sys.executable, "-m", "codecite_lsp", *args, "--repo", str(repo)],
        capture_output=True,
        text=True,
        env=full,
        timeout=180,
    )
