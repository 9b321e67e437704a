"""lancedb is imported without building its REST namespace client's validators (~40% of the
import's CPU time); those methods still validate their arguments, at their first call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[3]

SCRIPT = """
import pydantic
real = pydantic.validate_call
from codecite_lsp.index.lance_import import import_lancedb
lancedb = import_lancedb()
assert pydantic.validate_call is real, "pydantic left patched"
from lance_namespace_urllib3_client.api.table_api import TableApi
method = TableApi.describe_table
print("deferred" if method.__code__.co_filename.endswith("lance_import.py") else "built")
try:
    TableApi.__new__(TableApi).describe_table(123, None)  # not a string, no request
except pydantic.ValidationError as exc:
    print("validated", exc.error_count())
print("connect" if callable(lancedb.connect) else "no connect")
"""


def test_the_rest_client_validates_at_its_first_call_not_at_import() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["deferred", "validated 2", "connect"]
