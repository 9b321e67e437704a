"""Neovim passes vim.secure's word on a repository to the server as ``trusted``: a committed
.codecite.toml may choose the model only after `:trust`, and again untrusted once edited."""

from __future__ import annotations

from pathlib import Path

from lsp_helpers import run_nvim_script

SCRIPT = Path(__file__).parent / "nvim" / "trust.lua"


def test_trust_follows_vim_secure(tmp_path: Path) -> None:
    assert run_nvim_script(SCRIPT, tmp_path) == {
        "untrusted": False,
        "trusted": True,
        "edited_after_trust": False,
    }
