"""The import-linter contract in pyproject.toml holds, and it does catch an import that runs back
up the data flow (a stage importing a later one)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

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
    assert "1 kept, 0 broken" in result.stdout


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
