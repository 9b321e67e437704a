"""A private key or a cloud credential file written inside something else, line by line (issue
42): HTML, CSV, JSON arrays, Markdown tables, one JSON string with ``\\n`` escapes, YAML block
scalars and the comments of every parsed language, each holding a PEM RSA key, an OpenSSH key, a
PGP private key block and Google credential files. After a real `codecite index` no line of any
of them is in the chunk table, and each file is reported as skipped."""

from __future__ import annotations

import base64
import csv
import io
import json
import random
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest


def _base64_lines(seed: str, size: int, width: int) -> list[str]:
    return textwrap.wrap(base64.b64encode(random.Random(seed).randbytes(size)).decode(), width)


def _pem_rsa() -> list[str]:
    body = _base64_lines("rsa", 1190, 64)
    return ["-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----"]


def _openssh() -> list[str]:
    der = b"openssh-key-v1\0" + random.Random("openssh").randbytes(380)
    body = textwrap.wrap(base64.b64encode(der).decode(), 70)
    return ["-----BEGIN OPENSSH PRIVATE KEY-----", *body, "-----END OPENSSH PRIVATE KEY-----"]


def _pgp() -> list[str]:
    return [
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
        "",
        *_base64_lines("pgp", 900, 64),
        "=Xk4T",
        "-----END PGP PRIVATE KEY BLOCK-----",
    ]


def _service_account() -> list[str]:
    pem = "\n".join(["-----BEGIN PRIVATE KEY-----", *_base64_lines("sa", 1210, 64)])
    account = {
        "type": "service_account",
        "project_id": "shop-prod",
        "private_key_id": "3f1c0d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e",
        "private_key": pem + "\n-----END PRIVATE KEY-----\n",
        "client_email": "deploy@shop-prod.iam.gserviceaccount.com",
        "client_id": "104862519374628193746",
    }
    return json.dumps(account, indent=2).splitlines()


def _authorized_user() -> list[str]:
    # ~/.config/gcloud/application_default_credentials.json after `gcloud auth login`
    user = {
        "client_id": "764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com",
        "client_secret": "d-FL95Q19q7MQmFpd7hHD0Ty",
        "refresh_token": "1//0gTq7Rv2Lm9Np4Rs8Tv1Wy3Ab5Cd7Ef9Gh1Jk3Zr8Kq2Lm9Np4Rs8Tv1Wy3Ab5"
        "Cd7Ef9Gh1Jk3Zr8Kq2Lm9Np4Rs8Tv1Wy3Ab5Cd7",
        "type": "authorized_user",
    }
    return json.dumps(user, indent=2).splitlines()


KEYS: dict[str, Callable[[], list[str]]] = {
    "rsa": _pem_rsa,
    "openssh": _openssh,
    "pgp": _pgp,
    "service_account": _service_account,
    "authorized_user": _authorized_user,
}


def _csv(lines: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([n, line] for n, line in enumerate(lines, 1))
    return out.getvalue()


def _each(prefix: str, suffix: str = "") -> Callable[[list[str]], str]:
    return lambda lines: "".join(f"{prefix}{line}{suffix}\n" for line in lines)


def _block(opener: str, prefix: str, closer: str, after: str) -> Callable[[list[str]], str]:
    return lambda lines: f"{opener}\n{_each(prefix)(lines)}{closer}\n{after}"


# (file name, how the lines are written into it)
LAYOUTS: dict[str, tuple[str, Callable[[list[str]], str]]] = {
    "html": ("notes.html", _each("<span>", "</span><br>")),
    "html_cells": ("table.html", lambda ls: "".join(f"<tr><td>{x}</td></tr>\n" for x in ls)),
    "csv": ("dump.csv", _csv),
    "json_array": ("lines.json", lambda ls: json.dumps({"lines": ls}, indent=2) + "\n"),
    "markdown_table": (
        "table.md",
        lambda ls: (
            "| n | line |\n| - | - |\n" + "".join(f"| {n} | {x} |\n" for n, x in enumerate(ls, 1))
        ),
    ),
    "escaped_string": ("blob.json", lambda ls: json.dumps({"key": "\n".join(ls) + "\n"}) + "\n"),
    "yaml_block": ("values.yaml", lambda ls: "tls:\n  key: |\n" + _each("    ")(ls)),
    "python": ("fixture.py", _each("# ")),
    "python_docstring": ("doc.py", _block('"""', "    ", '"""', "x = 1\n")),
    "javascript": ("fixture.js", _each("// ")),
    "typescript": ("fixture.ts", _each("  // ")),
    "tsx": ("fixture.tsx", _block("/*", " * ", " */", "export const x = 1;\n")),
    "go": ("fixture.go", _each("// ")),
    "rust": ("fixture.rs", _each("/// ")),
    "java": ("Fixture.java", _block("/**", " * ", " */", "class Fixture {}\n")),
    "c": ("fixture.c", _block("/*", " * ", " */", "int x;\n")),
    "cpp": ("fixture.cpp", _each("//")),
    "csharp": ("Fixture.cs", _each("/// ")),
    "ruby": ("fixture.rb", _block("=begin", "", "=end", "X = 1\n")),
    "php": ("fixture.php", lambda ls: "<?php\n" + _each("# ")(ls)),
    "kotlin": ("Fixture.kt", _each("// ")),
    "swift": ("Fixture.swift", _each("/// ")),
    "scala": ("Fixture.scala", _block("/*", "  * ", "  */", "object Fixture\n")),
    "lua": ("fixture.lua", _block("--[[", "", "]]", "local x = 1\n")),
    "lua_line": ("line.lua", _each("-- ")),
    "bash": ("fixture.sh", _each("# ")),
    "markdown_comment": ("notes.md", _block("<!--", "", "-->", "# Notes\n")),
    "lisp": ("init.el", _each(";; ")),
    "tex": ("paper.tex", _each("% ")),
    "sql": ("schema.sql", _each("-- ")),
}


@pytest.fixture(autouse=True)
def _keyword_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODECITE_EMBEDDING", "none")
    monkeypatch.delenv("CODECITE_TRUST_REPO_CONFIG", raising=False)


def _key_lines(lines: list[str]) -> set[str]:
    """The lines that carry the secret: key material and credential values, not braces."""
    words = ("PRIVATE", "private_key", "client_secret", "refresh_token")
    return {x.strip() for x in lines if len(x.strip()) >= 20 or any(w in x for w in words)}


def test_no_wrapped_key_reaches_the_chunk_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import lancedb

    from codecite_lsp.cli import main

    repo = tmp_path / "repo"
    repo.mkdir()
    written: dict[str, list[str]] = {}
    for layout, (name, render) in LAYOUTS.items():
        for key, lines in KEYS.items():
            folder = repo / layout / key
            folder.mkdir(parents=True)
            (folder / name).write_text(render(lines()), encoding="utf-8")
            written[f"{layout}/{key}/{name}"] = lines()
    for n in range(len(written)):  # mostly code: a folder of keys is not a root at all
        (repo / f"good_{n}.py").write_text(f"def rotate_{n}(store):\n    return store.rotate()\n")

    code = main(["index", "--quiet", "--repo", str(repo)])
    _out, err = capsys.readouterr()
    assert code == 0, err
    unskipped = [path for path in written if f"skipped {path}: " not in err]
    assert not unskipped, f"{len(unskipped)} of {len(written)} indexed: {unskipped}"
    for path in written:
        assert "never indexed" in err.split(f"skipped {path}: ", 1)[1].splitlines()[0]
    table = lancedb.connect(repo / ".codecite" / "lance").open_table("chunks").to_arrow()
    assert set(table.column("path").to_pylist()) == {f"good_{n}.py" for n in range(len(written))}
    texts = "\n".join(table.column("text").to_pylist())
    for path, lines in written.items():
        leaked = [x for x in _key_lines(lines) if x in texts]
        assert not leaked, (path, leaked)


CRYPTO_LIBRARY = '''\
"""PEM armour, as a library reads it (after cryptography's and pyca's serialization code)."""

_BEGIN = b"-----BEGIN PRIVATE KEY-----"
_END = b"-----END PRIVATE KEY-----"
_MARKERS = {
    "RSA": ("-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"),
    "OPENSSH": ("-----BEGIN OPENSSH PRIVATE KEY-----", "-----END OPENSSH PRIVATE KEY-----"),
    "PGP": ("-----BEGIN PGP PRIVATE KEY BLOCK-----", "-----END PGP PRIVATE KEY BLOCK-----"),
}


def load_pem_private_key(data: bytes, password: bytes | None = None) -> "PrivateKeyTypes":
    """Load a private key from PEM ``data`` between BEGIN PRIVATE KEY and END PRIVATE KEY."""
    start = data.index(_BEGIN) + len(_BEGIN)
    end = data.index(_END, start)
    return _backend.load_der_private_key(base64.b64decode(data[start:end]), password)


def serialize_private_key_to_an_ordinary_PKCS8_document(key: "PrivateKeyTypes") -> bytes:
    der = key.private_bytes(Encoding.DER, PrivateFormat.PKCS8, NoEncryption())
    lines = textwrap.wrap(base64.b64encode(der).decode(), 64)
    return b"\\n".join([_BEGIN, *(line.encode() for line in lines), _END]) + b"\\n"
'''


def test_a_pem_library_that_names_the_markers_is_indexed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from codecite_lsp.cli import main

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "serialization.py").write_text(CRYPTO_LIBRARY)
    code = main(["index", "--quiet", "--repo", str(repo)])
    out, err = capsys.readouterr()
    assert code == 0 and "skipped" not in err, err
    assert "indexed 1 files" in out
