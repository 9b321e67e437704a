"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lsp_helpers import copy_repo

# Quiet lancedb's deprecation chatter; litellm must not fetch its price table at import.
os.environ.setdefault("RUST_LOG", "error")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh copy of tests/fixtures/sample_repo that a test may modify."""
    return copy_repo(tmp_path)
