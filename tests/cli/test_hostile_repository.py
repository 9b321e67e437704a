"""`codecite index` and `search` on a repository written to leak (issue 23): a private key in
any layout, a credential folder as the root, a `.codeciteignore` that re-includes git-ignored
files. Nothing of it is indexed or written, and each refusal says why."""

from __future__ import annotations

import base64
import json
import random
import textwrap
from pathlib import Path

import pytest


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from codecite_lsp.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _keyword_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODECITE_EMBEDDING", "none")
    monkeypatch.delenv("CODECITE_TRUST_REPO_CONFIG", raising=False)


# --- a private key in any layout -------------------------------------------------------------


def _pem(kind: str = "RSA", encrypted: bool = False) -> list[str]:
    der = random.Random(kind).randbytes(1190)  # a 2048-bit key's DER is about this long
    headers = ["Proc-Type: 4,ENCRYPTED", f"DEK-Info: AES-128-CBC,{der[:16].hex().upper()}", ""]
    return [
        f"-----BEGIN {kind} PRIVATE KEY-----",
        *(headers if encrypted else []),
        *textwrap.wrap(base64.b64encode(der).decode(), 64),
        f"-----END {kind} PRIVATE KEY-----",
    ]


def _literals(lines: list[str], after_begin: str = "") -> str:
    body = [f'    "{line}\\n"' + (after_begin if n == 0 else "") for n, line in enumerate(lines)]
    return "KEY = (\n" + "\n".join(body) + "\n)\n"


LAYOUTS = {
    "key_in_comment.py": "\n".join(f"# {line}" for line in _pem()) + "\n",
    "key_in_block.c": "/*\n" + "\n".join(f" * {line}" for line in _pem()) + "\n */\nint x;\n",
    "key_in_quote.md": "# Deploy\n\n" + "\n".join(f"> {line}" for line in _pem()) + "\n",
    "key_literals.py": _literals(_pem(), after_begin="  # test fixture"),
    "key_encrypted.py": _literals(_pem(encrypted=True)),
    "key_numbered.txt": "".join(f"{n:03d}: {line}\n" for n, line in enumerate(_pem(), 1)),
}


def test_a_private_key_in_any_layout_is_never_indexed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "good.py").write_text("def rotate_key(store):\n    return store.rotate()\n")
    for name, text in LAYOUTS.items():
        (repo / name).write_text(text)

    code, out, err = run(capsys, "index", "--quiet", "--repo", str(repo))
    assert code == 0, err
    assert "indexed 1 files" in out
    for name in LAYOUTS:
        assert f"skipped {name}: contains a private key (PEM block); never indexed" in err
    for query in ("BEGIN RSA PRIVATE KEY", _pem()[1], "PRIVATE KEY DEK-Info Proc-Type"):
        code, out, err = run(capsys, "search", query, "--json", "--repo", str(repo))
        assert code == 0, err
        found = json.loads(out)["results"]
        assert {r["path"] for r in found} <= {"good.py"}, found
