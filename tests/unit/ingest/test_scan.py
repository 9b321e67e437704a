"""Workspace scanning and safe reading: what gets indexed, and what never does."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
from lsp_helpers import FIXTURE

from codecite_lsp.core.config import Config
from codecite_lsp.core.records import file_revision
from codecite_lsp.ingest.ignore import REASON_UNTRUSTED, IgnoreRules
from codecite_lsp.ingest.scan import (
    REASON_BINARY,
    REASON_GENERATED,
    REASON_LOCKFILE,
    REASON_MINIFIED,
    REASON_NOT_REGULAR,
    REASON_SYMLINK_BROKEN,
    REASON_SYMLINK_DIR,
    REASON_SYMLINK_LOOP,
    REASON_SYMLINK_OUT,
    REASON_SYMLINK_SECRET,
    REASON_VANISHED,
    Skip,
    SourceFile,
    read_source,
    scan,
)
from codecite_lsp.ingest.secrets import (
    REASON_PRIVATE_KEY,
    REASON_SECRET_DIR,
    REASON_SECRET_NAME,
    find_credential,
    is_secret_path,
)

CONFIG = Config()
TRUSTED = Config(repository_trusted=True)
FAKE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----\n"
)


def write(root: Path, rel: str, content: str | bytes = "x = 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def scanned(repo: Path, config: Config = CONFIG) -> list[str]:
    return [f.path for f in scan(repo, config).files]


def skip_reasons(repo: Path, config: Config = CONFIG) -> dict[str, str]:
    return {s.path: s.reason for s in scan(repo, config).skipped}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "core.excludesFile=/dev/null", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    repo = tmp_path / "sample_repo"
    shutil.copytree(FIXTURE, repo)
    write(repo, "app.log", "ignored by *.log\n")  # git-ignored files are made at run time
    write(repo, "build/out.py", "generated = True\n")
    return repo


def test_sample_repo_scan_lists_sources_and_reports_the_env_secret(sample: Path) -> None:
    result = scan(sample, CONFIG)
    paths = [f.path for f in result.files]
    assert paths == sorted(paths)
    assert "keyvault/keys.py" in paths and "web/src/client.ts" in paths
    assert "docs/operations.md" in paths and "README.md" in paths
    assert "app.log" not in paths and "build/out.py" not in paths
    assert ".env" not in paths
    assert result.skipped == [Skip(".env", REASON_SECRET_NAME)]
    keys = next(f for f in result.files if f.path == "keyvault/keys.py")
    stat = (sample / "keyvault/keys.py").stat()
    assert (keys.size, keys.mtime_ns) == (stat.st_size, stat.st_mtime_ns)


def _rich_tree(repo: Path) -> None:
    write(repo, ".gitignore", "/top.txt\n*.tmp\nlogs/\n!logs/keep.txt\n*.txt\n!important.txt\n")
    write(repo, "pkg/.gitignore", "/local.py\ndata/\n!keep.tmp\n")
    for rel in [
        "top.txt",  # anchored at the root: ignored
        "important.txt",  # re-included by a later negation
        "notes.txt",
        "sub/top.txt",  # *.txt still ignores it
        "local.py",  # pkg's anchored /local.py does not reach the root
        "pkg/local.py",
        "pkg/sub/local.py",
        "pkg/data/x.py",
        "data/x.py",  # pkg's data/ only applies below pkg
        "a.tmp",
        "pkg/keep.tmp",  # the deeper file's negation wins
        "other/keep.tmp",
        "logs/keep.txt",  # a file in an excluded folder cannot come back (git semantics)
        "src/main.py",
        "src/deep/er/mod.py",
    ]:
        write(repo, rel)


@pytest.mark.parametrize("is_git", [True, False], ids=["git-repo", "plain-folder"])
def test_nested_anchored_and_negated_gitignore_patterns_match_git(
    tmp_path: Path, is_git: bool
) -> None:
    repo = tmp_path / "repo"
    _rich_tree(repo)
    expected = [
        ".gitignore",
        "data/x.py",
        "important.txt",
        "local.py",
        "pkg/.gitignore",
        "pkg/keep.tmp",
        "pkg/sub/local.py",
        "src/deep/er/mod.py",
        "src/main.py",
    ]
    if is_git:
        git(repo, "init", "-q")
        oracle = git(repo, "ls-files", "--others", "--exclude-standard").split()
        assert sorted(oracle) == expected  # the expectation is git's own answer
    assert scanned(repo) == expected


def test_git_info_exclude_applies_below_every_gitignore(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    (repo / ".git/info/exclude").write_text("*.md\nscratch/\n", encoding="utf-8")
    write(repo, ".gitignore", "!README.md\n")  # .gitignore outranks info/exclude
    for rel in ["README.md", "CHANGES.md", "scratch/a.py", "src/a.py"]:
        write(repo, rel)
    oracle = sorted(git(repo, "ls-files", "--others", "--exclude-standard").split())
    assert scanned(repo) == oracle == [".gitignore", "README.md", "src/a.py"]
    assert not any(p.startswith(".git/") for p in scanned(repo))


def _git_oracle(repo: Path) -> list[str]:
    """What git itself lists as untracked and not ignored, with the configuration as it is."""
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return sorted(listed.stdout.split())


@pytest.mark.parametrize("where", ["core.excludesFile", "XDG_CONFIG_HOME"])
def test_the_users_global_git_excludes_apply_below_info_exclude(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    excludes = "*.local\nnotes/\nscratch.py\nTODO.md\n"  # what people keep out of every repo
    if where == "core.excludesFile":
        (tmp_path / "global_ignore").write_text(excludes, encoding="utf-8")
        config = tmp_path / "gitconfig"
        config.write_text(f"[core]\n\texcludesFile = {tmp_path / 'global_ignore'}\n")
    else:  # no core.excludesFile: git's default place
        write(tmp_path / "xdg", "git/ignore", excludes)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
        config = tmp_path / "empty-gitconfig"
        config.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    (repo / ".git/info/exclude").write_text("!TODO.md\n", encoding="utf-8")  # outranks global
    for rel in [".env.local", "notes/plan.py", "scratch.py", "TODO.md", "src/app.py"]:
        write(repo, rel)
    assert scanned(repo) == _git_oracle(repo) == ["TODO.md", "src/app.py"]


def test_codeciteignore_outranks_gitignore_and_builtins_but_never_secrets(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(repo, ".gitignore", "generated/\nreports/\n")
    write(
        repo,
        ".codeciteignore",
        "# index the build scripts, one generated module, hide the docs\n"
        "!build/\n!generated/keep.py\ndocs/\n!docs/api.md\n!.env\n",
    )
    for rel in [
        "build/script.py",
        "generated/keep.py",
        "generated/other.py",
        "generated/deeper/keep.py",
        "reports/r.py",
        "docs/guide.md",
        "docs/api.md",
        "src/app.py",
    ]:
        write(repo, rel)
    write(repo, ".env", "TOKEN=sk-live-FAKE\n")
    assert scanned(repo, TRUSTED) == [
        ".codeciteignore",
        ".gitignore",
        "build/script.py",
        "docs/api.md",
        "generated/keep.py",
        "src/app.py",
    ]
    assert skip_reasons(repo, TRUSTED) == {".env": REASON_SECRET_NAME}
    rules = IgnoreRules.load(repo, trusted=True)
    assert rules.is_ignored("generated/other.py") and not rules.is_ignored("generated/keep.py")
    assert rules.is_ignored("generated", is_dir=True)  # the folder itself stays excluded
    assert rules.is_ignored(".env")
    # Untrusted, a git-ignored file stays out (said so); a built-in exclusion is still undone.
    assert "generated/keep.py" not in scanned(repo) and "build/script.py" in scanned(repo)
    assert skip_reasons(repo)["generated/keep.py"] == REASON_UNTRUSTED
    assert IgnoreRules.load(repo).why_ignored("generated/keep.py") == "untrusted"


def test_vendored_and_build_folders_are_pruned_wherever_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    for rel in [
        "node_modules/left-pad/index.js",
        "web/node_modules/react/index.js",
        "vendor/github.com/x/y.go",
        "dist/bundle.js",
        "target/debug/main.rs",
        ".venv/lib/site.py",
        "__pycache__/m.cpython-311.pyc",
        ".mypy_cache/x.json",
        "pkg.egg-info/PKG-INFO",
        "env3/pyvenv.cfg",  # a virtualenv under any name
        "env3/lib/x.py",
        "venv/__init__.py",  # a source package named venv (as in the stdlib) is kept
        ".codecite/chunks.lance",
        "web/src/app.ts",
    ]:
        write(repo, rel)
    entered: list[str] = []
    real_scandir = os.scandir

    def spy(path: str) -> object:
        entered.append(os.path.relpath(path, repo))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", spy)
    assert scanned(repo) == ["venv/__init__.py", "web/src/app.ts"]
    assert sorted(entered) == [".", "venv", "web", "web/src"]  # pruned, never listed


def test_a_custom_index_folder_inside_the_repo_is_never_scanned(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(repo, "state/idx/table.py")
    write(repo, "state/keep.py")
    assert scanned(repo, Config(index_dir="state/idx")) == ["state/keep.py"]


SECRET_PATHS = [
    ".env",
    "config/.env.production",
    ".env.example",  # templates too: see is_secret_path
    ".envrc",
    "deploy/prod.env",
    "certs/server.pem",
    "certs/server.key",
    "certs/client.p12",
    "certs/client.pfx",
    "android/release.jks",
    "android/debug.keystore",
    "id_rsa",
    "home/.ssh/id_ed25519.pub",
    "id_dsa",
    "id_ecdsa",
    "credentials",
    "gcp/credentials.json",
    "aws.credentials",
    "secrets.yaml",
    "config/secrets.toml",
    "client_secret_123.json",
    "app-secrets.yml",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".htpasswd",
    ".git-credentials",
    "infra/terraform.tfstate",
    "infra/prod.tfvars",
    "gcp/service-account-prod.json",
    ".aws/config",
    "putty.ppk",
]
NOT_SECRET = [
    "secrets.py",  # the stdlib module
    "src/secret_manager.ts",
    "keyvault/keys.py",
    "auth/credentials.py",
    "environment.py",
    "docs/env.md",
    "key_rotation.md",
    "tokens.ts",
]


@pytest.mark.parametrize("rel", SECRET_PATHS)
def test_every_secret_pattern_is_skipped_even_when_git_tracks_it(tmp_path: Path, rel: str) -> None:
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    write(repo, rel, "API_KEY=sk-live-FAKE0123456789\n")
    write(repo, "main.py")
    git(repo, "add", "-f", rel)  # tracked: git would hand it over, we must not
    assert is_secret_path(rel)
    assert scanned(repo) == ["main.py"]
    (skip,) = scan(repo, CONFIG).skipped  # reported once: the file, or its secret folder
    assert skip.path == rel or rel.startswith(skip.path + "/")
    assert IgnoreRules.load(repo).is_ignored(rel)
    assert isinstance(read_source(repo, rel, CONFIG), Skip)


@pytest.mark.parametrize("rel", NOT_SECRET)
def test_ordinary_sources_with_secret_sounding_names_are_kept(rel: str) -> None:
    assert not is_secret_path(rel)


def test_a_secret_folder_is_reported_once_and_not_walked(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(repo, ".ssh/config", "Host x\n")
    write(repo, ".ssh/keys/a", "k\n")
    assert scanned(repo) == []
    assert skip_reasons(repo) == {".ssh": REASON_SECRET_DIR}


def test_read_source_refuses_a_pem_private_key_but_keeps_code_that_parses_pem(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    write(repo, "fixtures/server_test.py", f'KEY = """{FAKE_KEY}"""\n')
    escaped = FAKE_KEY.replace("\n", "\\n")
    write(repo, "fixtures/inline.ts", f'const key = "{escaped}";\n')
    parser = 'def is_key(line):\n    return line == "-----BEGIN RSA PRIVATE KEY-----"\n'
    write(repo, "pemtools.py", parser)
    assert read_source(repo, "fixtures/server_test.py", CONFIG) == Skip(
        "fixtures/server_test.py", REASON_PRIVATE_KEY
    )
    assert read_source(repo, "fixtures/inline.ts", CONFIG) == Skip(
        "fixtures/inline.ts", REASON_PRIVATE_KEY
    )
    source = read_source(repo, "pemtools.py", CONFIG)
    assert isinstance(source, SourceFile) and source.text == parser


def test_read_source_returns_text_revision_size_and_mtime(sample: Path) -> None:
    source = read_source(sample, "keyvault/keys.py", CONFIG)
    raw = (sample / "keyvault/keys.py").read_bytes()
    assert isinstance(source, SourceFile)
    assert source.text == raw.decode("utf-8")
    assert source.revision == file_revision(raw)
    assert source.size == len(raw)
    assert source.mtime_ns == (sample / "keyvault/keys.py").stat().st_mtime_ns


def test_bom_is_stripped_and_crlf_kept(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbfdef f():\r\n    return 1\r\n"
    write(tmp_path, "bom.py", raw)
    source = read_source(tmp_path, "bom.py", CONFIG)
    assert isinstance(source, SourceFile)
    assert source.text == "def f():\r\n    return 1\r\n"
    assert source.revision == file_revision(raw)


def test_binary_invalid_utf8_huge_and_minified_files_are_refused(tmp_path: Path) -> None:
    write(tmp_path, "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    write(tmp_path, "latin1.txt", "café\n".encode("latin-1"))
    with (tmp_path / "big.sql").open("wb") as handle:
        handle.write(b"-- dump\n" * (20 * 1024 * 1024 // 8))  # 20 MB
    write(tmp_path, "app.min.js", "var a=1;" * 200 + "\n")
    reasons = {
        rel: read_source(tmp_path, rel, CONFIG)
        for rel in ["logo.png", "latin1.txt", "big.sql", "app.min.js"]
    }
    assert reasons["logo.png"] == Skip("logo.png", REASON_BINARY)
    latin = reasons["latin1.txt"]
    assert isinstance(latin, Skip) and latin.reason.startswith("not valid UTF-8")
    big = reasons["big.sql"]
    assert isinstance(big, Skip) and big.reason.startswith("too large (20.0 MB")
    assert reasons["app.min.js"] == Skip("app.min.js", REASON_MINIFIED)
    # scan refuses the huge file by its size alone, once
    assert skip_reasons(tmp_path)["big.sql"] == big.reason
    assert "big.sql" not in scanned(tmp_path)


def test_a_long_line_is_judged_against_the_configured_limit(tmp_path: Path) -> None:
    write(tmp_path, "table.md", "| " + "cell | " * 100 + "\n")  # ~700 characters
    assert isinstance(read_source(tmp_path, "table.md", CONFIG), SourceFile)
    tight = Config(max_line_length=500)
    assert read_source(tmp_path, "table.md", tight) == Skip("table.md", REASON_MINIFIED)


M, G = REASON_MINIFIED, REASON_GENERATED


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # minified by content, not by one long line
        ("x = 1\n" * 30 + 'LOGO = "' + "iVBORw0KGgo" * 200 + '"\n', None),  # one data line
        ("# Notes\n\n" + "- a point\n" * 4 + "A paragraph on one line, " * 50 + "\n", None),
        ("var a=[1,2];" * 200 + "\n", M),  # one line of code, spaces taken out
        ("/*! banner */\n" + "function f(a){return a?[a]:{}};" * 100 + "\n", M),
        ("\n".join("0.5 1.25 3.0 " * 100 for _ in range(4)) + "\n", M),  # all long lines
        # generated by a marker in the first lines
        ("// Code generated by protoc-gen-go. DO NOT EDIT.\npackage pb\n", G),
        ("# @generated by tools/gen.py\nX = 1\n", G),
        ("// <auto-generated>\n//     by a tool\n// </auto-generated>\nclass A {}\n", G),
        ('"""DO NOT EDIT: written by make schema."""\nX = 1\n', G),
        ("/*\n * @generated SignedSource<<abc>>\n */\nexport const x = 1;\n", G),
        ('MARKER = "DO NOT EDIT"\n', None),  # code that mentions the marker
        ('"""Module doc."""\n' + "x = 1\n" * 10 + "# DO NOT EDIT below\n", None),  # too late
        ("# do not edit lightly\nX = 1\n", None),  # prose, not the marker
    ],
    ids=[
        "data line", "prose line", "one line", "banner and one line", "all long", "go marker",
        "@generated", "auto-generated", "docstring marker", "block comment marker",
        "code naming the marker", "marker too late", "prose",
    ],
)  # fmt: skip
def test_minified_or_generated_is_judged_by_content(
    tmp_path: Path, text: str, reason: str | None
) -> None:
    write(tmp_path, "mod.py", text)
    result = read_source(tmp_path, "mod.py", CONFIG)
    assert result == Skip("mod.py", reason) if reason else isinstance(result, SourceFile)


def test_lockfiles_are_refused_as_generated(tmp_path: Path) -> None:
    write(tmp_path, "web/package-lock.json", '{"lockfileVersion": 3}\n')
    assert read_source(tmp_path, "web/package-lock.json", CONFIG) == Skip(
        "web/package-lock.json", REASON_LOCKFILE
    )


def test_symlinks_loops_escapes_and_secrets(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    outside = write(tmp_path, "outside/secret_plan.py", "PLAN = 1\n")
    write(repo, "src/real.py", "REAL = 1\n")
    write(repo, ".env", "TOKEN=sk-live-FAKE\n")
    (repo / "src/alias.py").symlink_to("real.py")
    (repo / "src/up").symlink_to("..", target_is_directory=True)  # loops back to the root
    (repo / "self").symlink_to("self")
    (repo / "escape.py").symlink_to(outside)
    (repo / "escape_dir").symlink_to(outside.parent, target_is_directory=True)
    (repo / "env_copy.txt").symlink_to(".env")
    (repo / "dangling.py").symlink_to("missing.py")
    (repo / "docs").mkdir()
    (repo / "docs/src").symlink_to("../src", target_is_directory=True)

    result = scan(repo, CONFIG)  # returns: loops are not followed
    assert [f.path for f in result.files] == ["src/alias.py", "src/real.py"]
    assert {s.path: s.reason for s in result.skipped} == {
        ".env": REASON_SECRET_NAME,
        "dangling.py": REASON_SYMLINK_BROKEN,
        "docs/src": REASON_SYMLINK_DIR,
        "env_copy.txt": REASON_SYMLINK_SECRET,
        "escape.py": REASON_SYMLINK_OUT,
        "escape_dir": REASON_SYMLINK_OUT,
        "self": REASON_SYMLINK_LOOP,
        "src/up": REASON_SYMLINK_LOOP,
    }
    alias = read_source(repo, "src/alias.py", CONFIG)
    assert isinstance(alias, SourceFile) and alias.text == "REAL = 1\n"
    assert alias.path == "src/alias.py"
    assert read_source(repo, "escape.py", CONFIG) == Skip("escape.py", REASON_SYMLINK_OUT)
    assert read_source(repo, "escape_dir/secret_plan.py", CONFIG) == Skip(
        "escape_dir/secret_plan.py", REASON_SYMLINK_OUT
    )
    assert read_source(repo, "self", CONFIG) == Skip("self", REASON_SYMLINK_LOOP)
    assert read_source(repo, "env_copy.txt", CONFIG) == Skip("env_copy.txt", REASON_SYMLINK_SECRET)


def test_unreadable_file_is_skipped_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tests run as root, which reads any chmod 000 file; so the one open() of this path is made
    # to fail the way the kernel fails it for an ordinary user.
    write(tmp_path, "locked.py")
    write(tmp_path, "open.py")
    real_open = os.open
    locked = os.path.realpath(tmp_path / "locked.py")

    def deny(path: str, flags: int, mode: int = 0o777) -> int:
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", deny)
    assert read_source(tmp_path, "locked.py", CONFIG) == Skip(
        "locked.py", "unreadable (permission denied)"
    )
    assert isinstance(read_source(tmp_path, "open.py", CONFIG), SourceFile)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    write(tmp_path, "main.py")
    os.mkfifo(tmp_path / "pipe")
    assert read_source(tmp_path, "pipe", CONFIG) == Skip("pipe", REASON_NOT_REGULAR)
    assert skip_reasons(tmp_path) == {"pipe": REASON_NOT_REGULAR}
    assert scanned(tmp_path) == ["main.py"]


def test_empty_file_quotes_spaces_and_bad_paths(tmp_path: Path) -> None:
    write(tmp_path, "empty.py", "")
    odd = 'docs/it\'s a "quoted" file name.md'
    write(tmp_path, odd, "# Title\n")
    assert scanned(tmp_path) == [odd, "empty.py"]
    empty = read_source(tmp_path, "empty.py", CONFIG)
    assert isinstance(empty, SourceFile) and empty.text == "" and empty.size == 0
    quoted = read_source(tmp_path, odd, CONFIG)
    assert isinstance(quoted, SourceFile) and quoted.text == "# Title\n"
    assert read_source(tmp_path, "gone.py", CONFIG) == Skip("gone.py", REASON_VANISHED)
    for bad in ["../etc/passwd", "/etc/passwd", "", "a/../../x"]:
        result = read_source(tmp_path, bad, CONFIG)
        assert isinstance(result, Skip) and result.reason == "not a path inside the repository"


@pytest.mark.parametrize("trusted", [True, False])
def test_ignore_rules_agree_with_scan_for_every_path(tmp_path: Path, trusted: bool) -> None:
    repo = tmp_path / "repo"
    _rich_tree(repo)
    write(repo, ".codeciteignore", "!logs/keep.txt\nsrc/deep/\n")
    write(repo, "node_modules/x/index.js")
    write(repo, ".env", "K=1\n")
    indexed = set(scanned(repo, Config(repository_trusted=trusted)))
    rules = IgnoreRules.load(repo, trusted=trusted)
    every = [
        os.path.relpath(os.path.join(folder, name), repo).replace(os.sep, "/")
        for folder, _, names in os.walk(repo)
        for name in names
    ]
    assert len(every) > 15
    for rel in every:
        assert rules.is_ignored(rel) == (rel not in indexed), rel
    assert ("logs/keep.txt" in indexed) == trusted and "src/deep/er/mod.py" not in indexed


def test_refresh_picks_up_edited_ignore_files_and_new_virtualenvs(tmp_path: Path) -> None:
    write(tmp_path, "pkg/.gitignore", "*.gen.py\n")
    write(tmp_path, "pkg/a.gen.py")
    rules = IgnoreRules.load(tmp_path)
    assert rules.is_ignored("pkg/a.gen.py")
    write(tmp_path, "pkg/.gitignore", "# nothing ignored any more\n")
    assert rules.refresh("pkg/.gitignore")
    assert not rules.is_ignored("pkg/a.gen.py")
    write(tmp_path, ".codeciteignore", "pkg/\n")
    assert rules.refresh(".codeciteignore")
    assert rules.is_ignored("pkg/a.gen.py") and rules.is_ignored("pkg", is_dir=True)
    assert not rules.refresh("pkg/a.gen.py")
    write(tmp_path, "env3/lib/site.py")
    assert not rules.is_ignored("env3/lib/site.py")
    write(tmp_path, "env3/pyvenv.cfg", "home = /usr/bin\n")  # it just became a virtualenv
    assert rules.refresh("env3/pyvenv.cfg")
    assert rules.is_ignored("env3/lib/site.py")


def test_invalid_ignore_patterns_never_break_a_scan(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "***/[\n*.tmp\n\\\n")
    write(tmp_path, "a.tmp")
    write(tmp_path, "a.py")
    assert scanned(tmp_path) == [".gitignore", "a.py"]


def test_scanning_the_python_stdlib_leaves_out_site_packages() -> None:
    # Its time (target 0.5 s warm) is printed by `python bench/bench_index.py --bounds`.
    result = scan(Path(sysconfig.get_paths()["stdlib"]), CONFIG)
    assert len(result.files) > 1500
    assert not any("site-packages/" in f.path for f in result.files)


def fake_token(prefix: str, length: int, alphabet: str) -> str:
    """A credential-shaped string built at run time, so this test file holds none itself."""
    rng = random.Random(prefix)
    return prefix + "".join(rng.choice(alphabet) for _ in range(length))


UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
BASE64 = ALNUM + "/+"
URLSAFE = ALNUM + "_-"


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (f'KEY_ID = "{fake_token("AKIA", 16, UPPER_DIGITS)}"', "AWS access key id"),
        (f"session = '{fake_token('ASIA', 16, UPPER_DIGITS)}'", "AWS access key id"),
        (f'AWS_SECRET_ACCESS_KEY = "{fake_token("", 40, BASE64)}"', "AWS secret access key"),
        (f'{{"awsSecretAccessKey": "{fake_token("", 40, BASE64)}"}}', "AWS secret access key"),
        (f'token = "{fake_token("ghp_", 36, ALNUM)}"', "GitHub token"),
        (f'token = "{fake_token("github_pat_", 82, ALNUM + "_")}"', "GitHub token"),
        (f'SLACK = "{fake_token("xoxb-", 50, ALNUM + "-")}"', "Slack token"),
        (f'stripe.api_key = "{fake_token("sk_live_", 24, ALNUM)}"', "Stripe live key"),
        (f'client = OpenAI(api_key="{fake_token("sk-proj-", 48, URLSAFE)}")', "OpenAI API key"),
        (f'OPENAI = "{fake_token("sk-", 48, ALNUM)}"', "OpenAI API key"),
        (f'key = "{fake_token("sk-ant-api03-", 80, URLSAFE)}"', "Anthropic API key"),
        (f'MAPS_KEY = "{fake_token("AIza", 35, URLSAFE)}"', "Google API key"),
    ],
)
def test_a_tracked_code_file_holding_a_credential_is_skipped_whole(
    tmp_path: Path, line: str, kind: str
) -> None:
    repo = tmp_path / "repo"
    write(repo, "app/config.py", f"import os\n\n{line}\nDEBUG = False\n")
    reason = f"contains a credential ({kind}) at line 3; never indexed"
    assert read_source(repo, "app/config.py", CONFIG) == Skip("app/config.py", reason)


def test_code_that_only_mentions_credential_formats_is_kept(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    prose = (
        "# OpenAI keys start with sk- and AWS key ids with AKIA or ASIA; never commit them.\n"
        'PREFIXES = ("sk-", "sk-ant-", "AKIA", "ghp_", "xoxb-", "sk_live_", "AIza")\n'
        'aws_secret_access_key = os.environ["AWS_SECRET_ACCESS_KEY"]\n'
        "# AWS's documented examples: AKIAIOSFODNN7EXAMPLE and\n"
        'EXAMPLE_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n'
        f'PLACEHOLDER = "{"ghp_" + "x" * 36}"\n'
        f'aws_secret_access_key = "{"x" * 40}"\n'
        f'TEMPLATE = "{"sk-proj-" + "0" * 48}"\n'
        "def task_skeleton(risk_assessment_keyframe_0123456789): pass\n"
    )
    write(repo, "docs_helper.py", prose)
    source = read_source(repo, "docs_helper.py", CONFIG)
    assert isinstance(source, SourceFile) and source.text == prose


def test_find_credential_reports_the_first_real_one_after_a_placeholder() -> None:
    text = "a = 'AKIAIOSFODNN7EXAMPLE'\n\nb = '" + fake_token("AKIA", 16, UPPER_DIGITS) + "'\n"
    credential = find_credential(text)
    assert credential is not None and (credential.kind, credential.line) == ("AWS access key id", 3)
