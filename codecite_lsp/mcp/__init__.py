"""The MCP server for coding agents (``codecite mcp``): search, ask and verify over stdio."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def run_stdio(repo: Path, settings: Mapping[str, Any]) -> None:
    """Start opening the index, then load the MCP SDK and serve: the two imports (lancedb in
    the background, the SDK here, each about a second) overlap instead of adding up."""
    from .workspace import Workspace

    workspace = Workspace(repo, settings)
    workspace.start()
    from .server import serve

    serve(workspace)
