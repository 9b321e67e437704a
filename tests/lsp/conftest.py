"""Fixtures of the language-server tier."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_helpers import RawServer


@pytest.fixture
def raw(tmp_path: Path) -> Iterator[RawServer]:
    """The server over raw pipes, with a home folder of its own."""
    home = tmp_path / "home"
    home.mkdir()
    server = RawServer(tmp_path, HOME=str(home))
    yield server
    server.close()
