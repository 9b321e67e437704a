"""The import-linter contracts in pyproject.toml hold, and they do catch an import that runs back
up the data flow (a stage importing a later one), and a door (lsp, mcp) doing a stage's work."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# import-linter's command, installed beside this interpreter by the test extra
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [LINT_IMPORTS, "--config", str(tree / "pyproject.toml")],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(
        ROOT / "codecite_lsp", tree / "codecite_lsp", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_the_layers_contract_is_kept(tmp_path: Path) -> None:
    result = _lint(_copy(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def test_an_import_from_a_later_stage_breaks_the_contract(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    terms = tree / "codecite_lsp" / "core" / "terms.py"
    terms.write_text(terms.read_text() + "\nfrom ..verify import gate  # planted\n")
    result = _lint(tree)
    assert result.returncode != 0
    assert "codecite_lsp.core.terms -> codecite_lsp.verify.gate" in result.stdout, result.stdout


def test_the_gate_cannot_read_the_ranking(tmp_path: Path) -> None:
    # verify/ and retrieve/ are independent siblings: a quote is never judged by a score.
    tree = _copy(tmp_path)
    gate = tree / "codecite_lsp" / "verify" / "gate.py"
    gate.write_text(gate.read_text() + "\nfrom ..retrieve import scoring  # planted\n")
    result = _lint(tree)
    assert result.returncode != 0
    planted = "codecite_lsp.verify.gate -> codecite_lsp.retrieve.scoring"
    assert planted in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("door", "planted"),
    [
        ("lsp/region.py", "from ..retrieve import scoring"),
        # A type-only import counts too: a door names the service's types, not a stage's.
        ("mcp/tools.py", "if TYPE_CHECKING:\n    from ..verify.quotes import QuoteProblem"),
    ],
)
def test_a_door_importing_a_stage_breaks_the_thin_doors_contract(
    tmp_path: Path, door: str, planted: str
) -> None:
    tree = _copy(tmp_path)
    module = tree / "codecite_lsp" / door
    module.write_text(
        module.read_text() + f"\nfrom typing import TYPE_CHECKING\n\n{planted}  # planted\n"
    )
    result = _lint(tree)
    assert result.returncode != 0
    assert "The doors are thin" in result.stdout and "BROKEN" in result.stdout, result.stdout
    stage = planted.split()[-3].lstrip(".")
    importer = "codecite_lsp." + door.removesuffix(".py").replace("/", ".")
    assert f"{importer} -> codecite_lsp.{stage}" in result.stdout, result.stdout
