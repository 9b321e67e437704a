"""Headless Neovim 0.11 drives the real server: vim.lsp.start, wait for the index, hover."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lsp_helpers import copy_repo, nvim_binary, position_of, server_env

SCRIPT = Path(__file__).parent / "nvim" / "hover.lua"


def test_neovim_hover_cites_the_definition(tmp_path: Path):
    nvim = nvim_binary(minimum=(0, 11))  # vim.lsp.start and client:request_sync need 0.11
    repo = copy_repo(tmp_path)
    init = repo / "keyvault" / "__init__.py"
    position = position_of(init, "rotate_key")
    env = server_env(
        CODECITE_REPO=str(repo),
        CODECITE_FILE=str(init),
        CODECITE_LINE=str(position.line),
        CODECITE_CHARACTER=str(position.character),
        CODECITE_EXPECT="keyvault/keys.py:",
        CODECITE_PYTHON=sys.executable,
        HOME=str(tmp_path),  # --clean ignores user config; keep its state files out of ~ too
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    done = subprocess.run(
        [nvim, "--headless", "--clean", "-l", str(SCRIPT)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "keyvault/keys.py:" in done.stdout
    assert "rotate_key" in done.stdout
    assert (repo / ".codecite").is_dir()  # the server really indexed this copy
