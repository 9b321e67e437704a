"""Symbolic links written to leak or to stall (issue 42): loops, links out of the root, links to
a key file, 10,000 links. `codecite index` finishes, indexes nothing outside the root and no
secret, and says why each link was left out."""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import lancedb

KEY = "\n".join(
    [
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        *textwrap.wrap(base64.b64encode(random.Random(4).randbytes(400)).decode(), 70),
        "-----END OPENSSH PRIVATE KEY-----",
        "",
    ]
)
OUTSIDE_WORD = "quetzalbeyond"


def _index(repo: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CODECITE_EMBEDDING": "none"}
    command = [sys.executable, "-m", "codecite_lsp", "index", "--quiet", "--repo", str(repo)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def _indexed(repo: Path) -> tuple[list[str], str]:
    table = lancedb.connect(repo / ".codecite" / "lance").open_table("chunks").to_arrow()
    return table.column("path").to_pylist(), "\n".join(table.column("text").to_pylist())


def test_loops_escapes_and_links_to_keys_index_nothing_outside_or_secret(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.py").write_text(f"def far():\n    return '{OUTSIDE_WORD}'\n")
    (outside / "deploy_key").write_text(KEY)
    (outside / "nested").mkdir()
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("def rotate(store):\n    return store.rotate()\n")
    (repo / "keys").mkdir()
    (repo / "keys" / "backup.txt").write_text(KEY)  # a key by content, under an innocent name
    links = {
        "loop_a": "loop_b",  # a -> b -> a
        "loop_b": "loop_a",
        "self": "self",
        "src/up": "..",  # a folder link to an ancestor: the tree would never end
        "src/root": str(repo),
        "far.py": str(outside / "notes.py"),  # out of the root, absolute
        "relative_far.py": "../outside/notes.py",  # out of the root, relative
        "far_folder": str(outside),
        "passwd": "/etc/passwd",
        "readme.txt": "keys/backup.txt",  # a link with a harmless name to a key inside
        "docs.md": str(outside / "deploy_key"),  # to a key outside
        "id_rsa_link.py": "keys/backup.txt",
        "dangling.py": "gone.py",
        "chain_1.py": "chain_2.py",  # a chain that ends outside
        "chain_2.py": str(outside / "nested" / ".." / "notes.py"),
    }
    for name, target in links.items():
        (repo / name).symlink_to(target)

    done = _index(repo)
    assert done.returncode == 0, done.stderr
    skipped = dict(
        line.removeprefix("skipped ").split(": ", 1)
        for line in done.stderr.splitlines()
        if line.startswith("skipped ")
    )
    for name in links:
        assert name in skipped, (name, done.stderr)  # every link left out, each with its reason
    assert "loop" in skipped["loop_a"] and "loop" in skipped["src/up"]
    assert skipped["far.py"] == "symlink leaves the repository"
    assert skipped["keys/backup.txt"].startswith("contains a private key")
    paths, texts = _indexed(repo)
    assert paths == ["src/app.py"], paths
    assert OUTSIDE_WORD not in texts and "PRIVATE KEY" not in texts and "root:" not in texts


def test_ten_thousand_links_finish_and_index_nothing_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text(f"def far():\n    return '{OUTSIDE_WORD}'\n")
    repo = tmp_path / "repo"
    (repo / "many").mkdir(parents=True)
    (repo / "app.py").write_text("def rotate(store):\n    return store.rotate()\n")
    for n in range(10_000):
        (repo / "many" / f"link_{n}.py").symlink_to(outside if n % 2 else repo / f"loop_{n}")
    done = _index(repo)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("skipped many/link_") == 10_000
    paths, texts = _indexed(repo)
    assert paths == ["app.py"] and OUTSIDE_WORD not in texts
    search = subprocess.run(
        [sys.executable, "-m", "codecite_lsp", "search", "rotate", "--json", "--repo", str(repo)],
        env={**os.environ, "CODECITE_EMBEDDING": "none"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert [r["path"] for r in json.loads(search.stdout)["results"]] == ["app.py"], search.stderr
