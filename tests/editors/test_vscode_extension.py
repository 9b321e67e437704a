"""The VS Code extension (editors/vscode), built and tested by its own npm scripts so that the
project's single ``pytest`` command covers it: TypeScript build, unit tests of the glue code with a
stand-in ``vscode`` module, the protocol layer against this server over stdio, and the chat panel
page in headless Chromium. VS Code itself cannot be downloaded here (see editors/vscode/README.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "editors" / "vscode"


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(
            "npm is not on PATH: install Node.js 20+ with npm to build and test editors/vscode"
        )
    return npm


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    # The server test launches `python -m codecite_lsp serve` with this interpreter.
    env = {**os.environ, "CODECITE_PYTHON": sys.executable}
    result = subprocess.run(
        args, cwd=EXTENSION, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, (
        f"`{' '.join(args[1:])}` failed in editors/vscode (exit {result.returncode})\n"
        f"--- stdout (end) ---\n{result.stdout[-6000:]}\n"
        f"--- stderr (end) ---\n{result.stderr[-3000:]}"
    )
    return result


@pytest.fixture(scope="module")
def npm() -> str:
    npm = _npm()
    if not (EXTENSION / "node_modules").is_dir():
        _run([npm, "ci", "--no-audit", "--no-fund"], timeout=900)
    return npm


def test_extension_builds_and_its_tests_pass(npm: str) -> None:
    screenshot = ROOT / "test-artifacts" / "chat-panel.png"
    screenshot.unlink(missing_ok=True)
    result = _run([npm, "test"], timeout=900)
    # Three node --test runs (unit, real server, browser): each must report tests and no failure.
    assert result.stdout.count("# fail 0") == 3, result.stdout[-3000:]
    assert "# pass 0\n" not in result.stdout
    assert screenshot.stat().st_size > 10_000


def test_extension_packages_as_vsix(npm: str) -> None:
    vsix = EXTENSION / "codecite.vsix"
    vsix.unlink(missing_ok=True)
    _run([npm, "run", "package"], timeout=600)
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
    for needed in (
        "extension/package.json",
        "extension/out/extension.js",
        "extension/out/web/chat.js",
        "extension/media/chat.css",
    ):
        assert needed in names, f"{needed} missing from the .vsix"
    # The server of the same source rides along: the offered install takes it, not a name on PyPI.
    wheels = [n for n in names if n.startswith("extension/server/codecite_lsp-")]
    assert len(wheels) == 1 and wheels[0].endswith(".whl"), sorted(names)
    # One bundled file: vscode-languageclient inside it, no node_modules to load at activation.
    assert not any(name.startswith("extension/node_modules/") for name in names)
    with zipfile.ZipFile(vsix) as archive:
        bundled = archive.read("extension/out/extension.js").decode()
    assert "LanguageClient=class extends" in bundled
    assert 'require("vscode")' in bundled
    assert not any(name.startswith(("extension/src/", "extension/out/test/")) for name in names), (
        "sources and tests are not shipped"
    )
