"""Fixtures shared by the test modules."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from lsp_helpers import copy_repo

from codecite_lsp.core.environment import apply_defaults

# The answering tests' fixtures (indexed, sources, litellm_calls) for every tier.
pytest_plugins = ["answer_helpers"]

# Quiet lancedb's deprecation chatter; litellm must not fetch its price table at import.
apply_defaults()

# What is indexed must not depend on this machine's global git excludes (ingest/ignore.py reads
# them, and the tests' git oracles would too): every process of the run sees none.
_GIT_GLOBAL = Path(tempfile.mkdtemp(prefix="codecite-tests-git-")) / "config"
atexit.register(shutil.rmtree, _GIT_GLOBAL.parent, ignore_errors=True)
_GIT_GLOBAL.write_text(f"[core]\n\texcludesFile = {os.devnull}\n", encoding="utf-8")
os.environ["GIT_CONFIG_GLOBAL"] = str(_GIT_GLOBAL)


_TIERS = ("unit", "fuzz", "cli", "lsp", "mcp", "editors")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its tier, the first folder under tests/ (``-m "not editors"``)."""
    tests = Path(__file__).parent
    for item in items:
        tier = item.path.relative_to(tests).parts[0]
        if tier in _TIERS:
            item.add_marker(tier)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh copy of tests/fixtures/sample_repo that a test may modify."""
    return copy_repo(tmp_path)
