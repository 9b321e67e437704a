"""One job per module: a module of codecite_lsp over 500 lines says why in its docstring, on a
line starting with the marker below (CONTRIBUTING.md, Style); a module under the limit carries no
stale reason."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "codecite_lsp"
LIMIT = 500
MARKER = "Over 500 lines because"
MODULES = sorted(PACKAGE.rglob("*.py"))


def reason(path: Path) -> str | None:
    """The docstring's line giving the module's reason for its length, if any."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return next((line for line in doc.splitlines() if line.strip().startswith(MARKER)), None)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_a_long_module_says_why_and_a_short_one_does_not(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    if lines > LIMIT:
        assert reason(path), f"{lines} lines: split it by job, or say `{MARKER}` why"
    else:
        assert reason(path) is None, f"{lines} lines: the reason for its length is stale"
