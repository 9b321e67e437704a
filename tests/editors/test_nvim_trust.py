"""Neovim passes vim.secure's word on a repository to the server as ``trusted``: a committed
.codecite.toml may choose the model only after `:trust`, and again untrusted once edited."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from lsp_helpers import nvim_binary

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).parent / "nvim" / "trust.lua"


def test_trust_follows_vim_secure(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    done = subprocess.run(
        [nvim_binary(), "--headless", "--clean", "--cmd", f"set rtp+={ROOT / 'editors' / 'nvim'}",
         "-l", str(SCRIPT)],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "untrusted": False,
        "trusted": True,
        "edited_after_trust": False,
    }
