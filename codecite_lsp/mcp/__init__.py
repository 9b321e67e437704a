"""The MCP server for coding agents (``codecite mcp``): search, ask and verify over stdio."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def run_stdio(repo: Path, settings: Mapping[str, Any]) -> None:
    """Load the MCP SDK (~1 s of CPU), then open the index in the background and serve.

    In that order because imports hold the GIL: opening the index first (lancedb's import is
    ~2 s of CPU) would only delay the reply to ``initialize`` without opening the index sooner.
    """
    from .server import serve
    from .workspace import Workspace

    workspace = Workspace(repo, settings)
    workspace.start()
    serve(workspace)
