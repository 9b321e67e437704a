"""``codecite mcp``: the MCP server for coding agents on stdio."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.config import Config


def cmd_mcp(args: argparse.Namespace, repo: Path, config: Config) -> int:
    """Run the MCP server on stdio for ``repo``."""
    from ..mcp import run_stdio

    # The Session reads the same files and env vars; flags left unset (None) change nothing.
    run_stdio(repo, {"index_dir": args.index_dir, "embedding": args.embedding})
    return 0
