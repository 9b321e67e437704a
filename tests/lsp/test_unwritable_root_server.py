"""The language server, run for real as a user who cannot write the workspace folder
(tests/other_user.py): the folder is indexed into the user's cache and the server says so."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import other_user
from lsp_helpers import SERVER_COMMAND, init_params, request, server_env, wait_indexed
from lsprotocol import types
from other_user import reachable_tmp_path, read_only_repo_fixture  # noqa: F401 (fixtures)
from pytest_lsp import ClientServerConfig, LanguageClient

from codecite_lsp.core.config import cached_index_dir


@contextlib.asynccontextmanager
async def server_as_other_user(home: Path) -> AsyncIterator[LanguageClient]:
    """The server as the other user, HOME in a folder of its own. Started in the test's own
    event loop (an async fixture may run in another one, and the client would never hear)."""
    env = {k: v for k, v in server_env().items() if not k.startswith("XDG_")}
    env["HOME"] = str(home)
    config = ClientServerConfig(server_command=[*other_user.prefix(), *SERVER_COMMAND],
                                server_env=env)  # fmt: skip
    client = await config.start()
    assert isinstance(client, LanguageClient)
    try:
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()


async def opened(repo: Path, home: Path) -> tuple[dict[str, Any], str]:
    """The root's status once indexed and its settings changed (the index must stay where it
    went), and what the server said meanwhile."""
    async with server_as_other_user(home) as client:
        await client.initialize_session(init_params("visual-studio-code", repo))
        await wait_indexed(client)
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"codecite": {"chunk_budget": 1500}})
        )  # an index-shaping setting: the root is indexed again, in the same place
        await wait_indexed(client, count=2)
        status = await request(client, "codecite/status", {})
        found = await request(client, "codecite/search", {"query": "rotate key"})
        assert "keyvault/keys.py" in {r["path"] for r in found["results"]}
        return dict(status["roots"][0]), " | ".join(m.message for m in client.messages)


def cache_of(repo: Path, tmp_path: Path) -> Path:
    cached = cached_index_dir(repo)
    assert cached is not None
    return tmp_path / "home" / ".cache" / "codecite" / cached.name


async def test_an_unwritable_folder_is_indexed_into_the_users_cache(repo: Path, tmp_path: Path):
    root, said = await opened(repo, other_user.home(tmp_path))
    assert root["index_dir"] == str(cache_of(repo, tmp_path))
    assert root["files_indexed"] > 0
    assert f"{repo} cannot be written; its index is kept in {cache_of(repo, tmp_path)}" in said
    assert not (repo / ".codecite").exists()


async def test_an_index_folder_it_cannot_write_is_replaced_by_one_in_the_cache(
    repo: Path, tmp_path: Path
):
    # An index built by the repository's owner: the CLI reads it, but a server must keep an
    # index current, so it builds its own in the cache.
    other_user.writable_again(repo)
    command = [sys.executable, "-m", "codecite_lsp", "index", "--repo", str(repo)]
    subprocess.run([*command, "--embedding", "none"], check=True, capture_output=True)
    for folder in [repo, *(repo / ".codecite").rglob("*"), repo / ".codecite"]:
        if folder.is_dir():
            folder.chmod(0o755 if other_user.prefix() else 0o555)
    root, said = await opened(repo, other_user.home(tmp_path))
    assert root["index_dir"] == str(cache_of(repo, tmp_path))
    assert root["files_indexed"] > 0
    assert f"cannot write to the index folder {repo / '.codecite'}" in said
    assert f"{repo.name} is indexed in {cache_of(repo, tmp_path)} instead" in said
