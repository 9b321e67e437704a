"""Chunking in a child process: a parser crash shows as a failed test, not a dead test run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).parents[1]

CHILD = textwrap.dedent(
    """
    import json, sys
    from codecite_lsp.ingest.chunking import chunk_text
    for path, text in json.load(sys.stdin):
        print(path, end=" ", flush=True)  # the last one printed is the one that crashed
        chunks = chunk_text(path, text, revision="r")
        print(sum(len(c.text) for c in chunks) == len(text), flush=True)
    """
)


def run_chunker(files: list[tuple[str, str]]) -> subprocess.CompletedProcess[str]:
    """Chunk in a child process: a crash must show as a failed test, not a dead test run."""
    return subprocess.run(
        [sys.executable, "-c", CHILD],
        input=json.dumps(files),
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
