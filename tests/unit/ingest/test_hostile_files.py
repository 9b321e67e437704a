"""Hostile files: input built to crash or hang the parser costs at most that file (issue 10).

Bounded in time for CI: every generated file stays under max_file_bytes and the parse deadline
bounds the slowest grammar.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from chunker_child import run_chunker

from codecite_lsp.core.config import Config
from codecite_lsp.ingest.guard import markdown_depth, parse_guarded
from codecite_lsp.ingest.languages import LANGUAGES
from codecite_lsp.ingest.scan import Skip, SourceFile
from codecite_lsp.ingest.workers import PARALLEL_MIN_FILES, Job, prepared

ROOT = Path(__file__).parents[3]
# The 271-byte file of issue 10: 260 nested block quotes were a SIGSEGV in tree-sitter-markdown.
QUOTES_271 = "# T\n\n" + ">" * 260 + " word\n"
LIST_300 = "# T\n\n" + "".join("  " * i + "- a\n" for i in range(300))
MIXED_200 = "> - " * 200 + "a\n"


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("notes.md", QUOTES_271),
        ("notes.md", LIST_300),
        ("notes.md", MIXED_200),
        ("Deep.kt", "val s = " + '"${' * 1100 + "1" + '}"' * 1100 + "\n"),
    ],
    ids=["quotes", "list", "mixed", "kotlin-templates"],
)
def test_files_that_crashed_the_parser_are_chunked_whole(path: str, text: str) -> None:
    done = run_chunker([(path, text)])
    assert done.returncode == 0, (done.stdout, done.stderr[-500:])
    assert done.stdout.split() == [path, "True"]  # every line indexed, as paragraphs


def test_markdown_depth_bounds_the_real_nesting_and_spares_ordinary_documents() -> None:
    nesting = LANGUAGES["markdown"].nesting
    assert nesting is not None and nesting.kind == "blocks"
    assert markdown_depth(QUOTES_271.encode()) > nesting.most
    assert markdown_depth(LIST_300.encode()) > nesting.most
    assert markdown_depth(MIXED_200.encode()) > nesting.most
    for readme in (ROOT / "README.md", ROOT / "docs" / "how-it-works.md"):
        if readme.exists():
            assert markdown_depth(readme.read_bytes()) < 20
    # a long horizontal rule or table separator is not nesting
    assert markdown_depth(b"-" * 500 + b"\n| --- | --- |\n") < 5


def test_a_parse_past_its_deadline_falls_back_to_plain_text() -> None:
    # Lua's error recovery is superlinear on this garbage: seconds per hundred kilobytes.
    garbage = "".join("  " * i + "- a\n" for i in range(700)).encode()
    # None only from the deadline (the parse itself would finish, in seconds); the time it takes
    # to give up is printed by `python bench/bench_index.py --bounds`.
    assert parse_guarded("lua", garbage, seconds=0.2) is None
    assert parse_guarded("lua", b"local x = 1\n", seconds=0.2) is not None


# --- a worker that dies costs one file ---------------------------------------------------------


def test_a_file_that_kills_a_worker_is_skipped_and_the_pass_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The workers are started without the Markdown guard, so the 271-byte file really crashes
    # tree-sitter in one of them (SIGSEGV), as any crash no guard foresaw would.
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(
        "import dataclasses\nfrom codecite_lsp.ingest.languages import LANGUAGES\n"
        "LANGUAGES['markdown'] = dataclasses.replace(LANGUAGES['markdown'], nesting=None)\n"
    )
    monkeypatch.setenv("PYTHONPATH", f"{hooks}{os.pathsep}{ROOT}")
    repo = tmp_path / "repo"
    repo.mkdir()
    for n in range(PARALLEL_MIN_FILES + 20):
        (repo / f"m{n}.py").write_text(f"def f{n}():\n    return {n}\n")
    (repo / "a.md").write_text(QUOTES_271)
    (repo / "b.md").write_text(LIST_300)
    config = Config()
    jobs = [Job(repo, p.name, config, None) for p in sorted(repo.iterdir())]

    results = {job.path: ready for job, ready in prepared(jobs)}

    assert len(results) == len(jobs)
    for name in ("a.md", "b.md"):
        skip = results[name].source
        assert isinstance(skip, Skip)
        # a stack overflow: SIGSEGV, or SIGBUS where the guard page lies elsewhere
        assert re.search(r"the parser crashed on this file \((SIGSEGV|SIGBUS)\)", skip.reason)
    indexed = [r for name, r in results.items() if name.endswith(".py")]
    assert all(isinstance(r.source, SourceFile) and r.chunks for r in indexed)


# --- secrets however they are written ----------------------------------------------------------

_KEY_LINES = [
    "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi4Z3Nq8u0b5pQ+1XHl4cCwTqvU",
    "q1Xr0vVb6sP2dLk8mN3wQz5yH7jT9fR4eW1aS6gD0hK2lU8oI3pY5tC7vB9nM1xZ",
]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "keys.py",
            'KEY = ("-----BEGIN RSA PRIVATE KEY-----\\n"\n'
            + "".join(f'       "{line}\\n"\n' for line in _KEY_LINES)
            + '       "-----END RSA PRIVATE KEY-----\\n")\n',
        ),
        (
            "keys.js",
            'const key = "-----BEGIN PRIVATE KEY-----\\n" +\n'
            + "".join(f'  "{line}\\n" +\n' for line in _KEY_LINES)
            + '  "-----END PRIVATE KEY-----";\n',
        ),
        (
            "keys.lua",
            'local key = "-----BEGIN EC PRIVATE KEY-----\\n" ..\n'
            + "".join(f'  "{line}\\n" ..\n' for line in _KEY_LINES)
            + '  "-----END EC PRIVATE KEY-----"\n',
        ),
        ("deploy.js", 'const token = "glpat-' + "x7Kq2Lm9Np4Rs8Tv1Wy3" + '";\n'),
        ("publish.js", 'const auth = "npm_' + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + '";\n'),
        ("gh.ts", 'export const t = "ghp_' + "Zr8Kq2Lm9Np4Rs8Tv1Wy3Ab5Cd7Ef9Gh1Jk3" + '";\n'),
        (
            "notify.py",
            'URL = "https://hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/'
            + "a1B2c3D4e5F6g7H8i9J0k1L2"
            + '"\n',
        ),
        ("oauth.go", 'var secret = "GOCSPX-' + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9S" + '"\n'),
        (
            "session.rb",
            'TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiIsImV4cCI6MX0.'
            + "Qm9ndXNTaWduYXR1cmVIZXJlMTIzNDU"
            + '"\n',
        ),
    ],
)
def test_a_credential_in_any_file_keeps_the_file_out(tmp_path: Path, name: str, text: str) -> None:
    from codecite_lsp.ingest.scan import read_source

    (tmp_path / name).write_text(text)
    refused = read_source(tmp_path, name, Config())
    assert isinstance(refused, Skip)
    assert "never indexed" in refused.reason


@pytest.mark.parametrize(
    "name", ["shadow", "etc/gshadow", ".bash_history", "home/u/.zsh_history", ".psql_history"]
)
def test_system_credential_files_are_secret_by_name(tmp_path: Path, name: str) -> None:
    from codecite_lsp.ingest.scan import read_source

    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text("root:$6$salt$hash:19000:0:99999:7:::\n")
    refused = read_source(tmp_path, name, Config())
    assert isinstance(refused, Skip) and "secret file" in refused.reason


def test_code_that_only_names_a_key_format_is_indexed(tmp_path: Path) -> None:
    from codecite_lsp.ingest.scan import read_source

    text = (
        'PEM = re.compile(b"-----BEGIN PRIVATE KEY-----(.*?)-----END PRIVATE KEY-----", re.S)\n'
        'HEADER = "-----BEGIN RSA PRIVATE KEY-----\\n"  # followed by the base64 body\n'
        "def token_prefix():\n    return 'npm_' + 'glpat-'\n"
    )
    (tmp_path / "pem.py").write_text(text)
    assert isinstance(read_source(tmp_path, "pem.py", Config()), SourceFile)
