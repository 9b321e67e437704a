"""The real language server reading a shared base from a real S3-protocol server (moto's, on
127.0.0.1): the `base` setting comes from the editor's settings, credentials from the
environment; searches see the base and the local edits over it, and a save moves the edited
file's text with it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import (
    init_params,
    progress_ends,
    request,
    server_config,
    wait_for,
    wait_indexed,
)
from lsprotocol import types
from object_store import (
    BUCKET,
    FILES,
    clone,
    codecite,
    committed,
    free_port,
    s3_server,
    store_env,
)
from pytest_lsp import LanguageClient

PORT = free_port()  # the server's environment is fixed when this module is imported
URI = f"s3://{BUCKET}/server"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The moto server, with the base of a CI checkout published; yields that checkout."""
    with s3_server(PORT) as env:
        ci = committed(tmp_path_factory.mktemp("ci") / "repo", FILES)
        done = codecite(ci, env, "index", "--publish", URI)
        assert done.returncode == 0, done.stderr
        yield ci


@pytest.fixture
def mine(store: Path, tmp_path: Path) -> Path:
    repo = clone(store, tmp_path / "mine")
    (repo / "changed.py").write_text(
        "def changed_function():\n    return 'newheron replaced it'\n", encoding="utf-8"
    )
    (repo / "deleted.py").unlink()
    return repo


@pytest_lsp.fixture(config=server_config(CODECITE_EMBEDDING="none", **store_env(PORT)))
async def client(lsp_client: LanguageClient, mine: Path):
    await lsp_client.initialize_session(init_params("visual-studio-code", mine, {"base": URI}))
    yield
    await lsp_client.shutdown_session()


async def _paths(client: LanguageClient, query: str) -> list[str]:
    found = await request(client, "codecite/search", {"query": query})
    return [r["path"] for r in found["results"]]


async def test_the_server_searches_the_base_and_the_edits_over_it(
    client: LanguageClient, mine: Path
) -> None:
    await wait_indexed(client)
    [end] = progress_ends(client)
    assert end.message is not None and " - over the base of " in end.message
    status = await request(client, "codecite/status", {})
    assert status["roots"][0]["files_indexed"] == 1  # only the edited file is indexed locally
    assert await _paths(client, "zebraquartz") == ["kept.py"]
    assert await _paths(client, "newheron") == ["changed.py"]
    assert await _paths(client, "oldmarmot") == []
    assert "deleted.py" not in await _paths(client, "walrusgone deleted_function")

    # a save: its new text is found, the one before it no longer
    (mine / "changed.py").write_text(
        "def changed_function():\n    return 'swanlater after the save'\n", encoding="utf-8"
    )
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=(mine / "changed.py").as_uri())
        )
    )
    assert await wait_for(lambda: _paths(client, "swanlater"), lambda p: p == ["changed.py"])
    assert await _paths(client, "newheron") == []
    # and a file saved back to the base's content is the base's again
    (mine / "changed.py").write_text(FILES["changed.py"], encoding="utf-8")
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=(mine / "changed.py").as_uri())
        )
    )
    assert await wait_for(lambda: _paths(client, "oldmarmot"), lambda p: p == ["changed.py"])
    assert await _paths(client, "swanlater") == []
