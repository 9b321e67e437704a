"""lancedb is imported without building its REST namespace client's validators (~40% of the
import's CPU time); those methods and models still validate, at their first use."""

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
assert "defer_build" not in pydantic.BaseModel.model_config, "models after the import deferred"
class Later(pydantic.BaseModel):
    size: int
assert Later.__pydantic_complete__, "a model made after the import not built"
from lance_namespace_urllib3_client.models import QueryTableRequest
print("model deferred" if not QueryTableRequest.__pydantic_complete__ else "model built")
try:
    QueryTableRequest(id=["t"], k="many", vector={"single_vector": [1.0]})
except pydantic.ValidationError as exc:
    print("model validated", exc.error_count())
from lance_namespace_urllib3_client.api.table_api import TableApi
method = TableApi.describe_table
print("deferred" if method.__code__.co_filename.endswith("lance_import.py") else "built")
try:
    TableApi.__new__(TableApi).describe_table(123, None)  # not a string, no request
except pydantic.ValidationError as exc:
    print("validated", exc.error_count())
print("connect" if callable(lancedb.connect) else "no connect")
"""


def test_the_rest_client_validates_at_its_first_use_not_at_import() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:5] == [
        "model deferred",
        "model validated 1",
        "deferred",
        "validated 2",
        "connect",
    ]


CONCURRENT = """
import threading
import pydantic
real, config = pydantic.validate_call, dict(pydantic.BaseModel.model_config)
from codecite_lsp.index.lance_import import import_lancedb
start = threading.Barrier(4)
def opening():
    start.wait()
    import_lancedb()
threads = [threading.Thread(target=opening) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(pydantic.validate_call is real, dict(pydantic.BaseModel.model_config) == config)
"""


def test_indexes_opened_in_several_threads_at_once_leave_pydantic_as_it_was() -> None:
    """The server opens its reader and its indexer in two threads; each import of lancedb
    patches pydantic for its duration, and two at once used to leave it patched."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", CONCURRENT], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True True"
