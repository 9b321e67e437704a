"""``codecite serve``: the language server on stdio."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.config import Config


def cmd_serve(args: argparse.Namespace, repo: Path, config: Config) -> int:
    """Run the language server on stdio (its roots come from the editor)."""
    from ..lsp.handlers import run_stdio

    run_stdio()
    return 0
