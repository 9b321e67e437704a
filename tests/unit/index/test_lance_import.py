"""lancedb is imported without what a local index never runs (its REST namespace client's API
classes and validators, the ``overrides`` checks: about a third of the import's time); all of it
is still there, and validates, at its first use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]

SCRIPT = """
import sys
import overrides
import pydantic
real = pydantic.validate_call
checked = overrides.override
from codecite_lsp.index.lance_import import import_lancedb
lancedb = import_lancedb()
assert pydantic.validate_call is real, "pydantic left patched"
assert overrides.override is checked, "overrides left patched"
api = "lance_namespace_urllib3_client.api.table_api"
print("api imported" if api in sys.modules else "api not imported")
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
import lance_namespace_urllib3_client as client
from lance_namespace_urllib3_client.api.table_api import TableApi
assert client.TableApi is TableApi and "TableApi" in dir(client)
assert client.models.QueryTableRequest is QueryTableRequest
assert client.__version__ and client.rest.RESTClientObject
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
        "api not imported",
        "model deferred",
        "model validated 1",
        "validated 2",
        "connect",
    ]


def test_a_lazy_package_imports_a_name_at_its_first_access_and_only_a_pure_one_is_lazy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codecite_lsp.index.lance_import import _lazy_package

    for name, init in {
        "pure_reexports": '"""Docs."""\n__version__ = "2"\n'
        "from pure_reexports.heavy import Thing\n",
        "runs_code": "from runs_code.heavy import Thing\nprint('imported')\n",
    }.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(init)
        (tmp_path / name / "heavy.py").write_text("Thing = object()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "pure_reexports.heavy", raising=False)

    assert _lazy_package("runs_code") is None
    package = _lazy_package("pure_reexports")
    assert package is not None
    monkeypatch.setitem(sys.modules, "pure_reexports", package)
    assert package.__version__ == "2"
    assert "pure_reexports.heavy" not in sys.modules
    assert "Thing" in dir(package)
    assert package.Thing is sys.modules["pure_reexports.heavy"].Thing
    with pytest.raises(AttributeError, match="no attribute 'Other'"):
        _ = package.Other


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
