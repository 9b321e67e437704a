"""Fixtures shared by the test modules."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import copy_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh copy of tests/fixtures/sample_repo that a test may modify."""
    return copy_repo(tmp_path)
