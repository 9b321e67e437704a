"""Settings sent by the editor: a partial change keeps what it does not mention."""

from __future__ import annotations

from pathlib import Path

import pytest_lsp
from lsp_helpers import (
    hover_at,
    init_params,
    progress_ends,
    request,
    server_config,
    wait_indexed,
)
from lsprotocol import types
from pytest_lsp import LanguageClient


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient, repo: Path, tmp_path: Path):
    options = {"index_dir": str(tmp_path / "elsewhere")}
    await lsp_client.initialize_session(init_params("visual-studio-code", repo, options))
    yield
    await lsp_client.shutdown_session()


async def test_a_partial_settings_change_keeps_the_other_settings(
    client: LanguageClient, repo: Path, tmp_path: Path
) -> None:
    await wait_indexed(client)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"codecite": {"hover": False}})
    )
    keys = repo / "keyvault" / "keys.py"
    hover = await hover_at(client, keys, "rotate_key")
    assert hover is None  # the change itself took effect
    found = await request(client, "codecite/search", {"query": "rotate key"})
    assert found["results"], "the index in index_dir is still the one searched"
    # index_dir was not reset to <repo>/.codecite, so nothing was rebuilt there
    assert not (repo / ".codecite").exists()
    assert len(progress_ends(client)) == 1


async def test_null_unsets_a_setting(client: LanguageClient, repo: Path) -> None:
    await wait_indexed(client)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"index_dir": None})
    )
    await wait_indexed(client, count=2)  # back to the default folder: a new index is built
    assert (repo / ".codecite").is_dir()
