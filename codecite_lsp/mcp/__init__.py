"""The MCP server for coding agents (``codecite mcp``): search, ask and verify over stdio."""

from __future__ import annotations

import logging
import os
import sys
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
    try:
        serve(workspace)
    finally:
        workspace.close()
    # The client closed the pipe and waits for the process to end: skip the interpreter's
    # teardown (seconds, with lancedb and a half-finished import in daemon threads).
    logging.shutdown()
    sys.stderr.flush()
    os._exit(0)
