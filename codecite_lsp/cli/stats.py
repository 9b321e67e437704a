"""``codecite stats``: the request trace log summarised."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..core.config import Config


def cmd_stats(args: argparse.Namespace, repo: Path, config: Config) -> int:
    """Print the summary of the index folder's request trace log, as JSON."""
    from ..answer.trace import summarise

    print(json.dumps(summarise(config.resolved_index_dir(repo)), indent=2))
    return 0
