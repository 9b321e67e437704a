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
    "tls.yaml": "kind: Secret\ndata:\n  tls.key: "
    + base64.b64encode("\n".join(_pem("EC")).encode()).decode()
    + "\n",
}


def test_a_private_key_in_any_layout_is_never_indexed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for n in range(len(LAYOUTS)):  # mostly code: a folder of keys is not a root at all
        (repo / f"good_{n}.py").write_text(
            f"def rotate_key_{n}(store):\n    return store.rotate()\n"
        )
    for name, text in LAYOUTS.items():
        (repo / name).write_text(text)

    code, out, err = run(capsys, "index", "--quiet", "--repo", str(repo))
    assert code == 0, err
    assert f"indexed {len(LAYOUTS)} files" in out
    for name in LAYOUTS:
        assert f"skipped {name}: contains a private key (PEM block); never indexed" in err
    for query in ("BEGIN RSA PRIVATE KEY", _pem()[1], "PRIVATE KEY DEK-Info Proc-Type"):
        code, out, err = run(capsys, "search", query, "--json", "--repo", str(repo))
        assert code == 0, err
        found = json.loads(out)["results"]
        assert all(r["path"].startswith("good_") for r in found), found


# --- a credential folder as the root ---------------------------------------------------------

DOCKER_CONFIG = '{"auths": {"registry.example.com": {"auth": "ZGVwbG95OnMzY3IzdC1wYXNzdzByZA=="}}}'


def _files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _credential_folders(tmp_path: Path) -> dict[str, Path]:
    docker = tmp_path / "me" / ".docker"
    docker.mkdir(parents=True)
    (docker / "config.json").write_text(DOCKER_CONFIG)
    aws = tmp_path / "me" / ".aws"
    aws.mkdir()
    (aws / "config").write_text("[default]\nregion = eu-west-1\n")
    copy = tmp_path / "ssh-backup"  # a copy of ~/.ssh: only its content says what it is
    copy.mkdir()
    (copy / "id_ed25519").write_text("\n".join(_pem("OPENSSH")) + "\n")
    (copy / "id_ed25519.pub").write_text("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI me@host\n")
    (copy / "known_hosts").write_text("github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO\n")
    (copy / "config").write_text("Host prod\n  User deploy\n")
    (docker / "nested").mkdir()
    docker_copy = tmp_path / "registry-login"
    docker_copy.mkdir()
    (docker_copy / "config.json").write_text(DOCKER_CONFIG)
    return {
        "docker": docker,
        "aws": aws,
        "inside": docker / "nested",
        "ssh copy": copy,
        "docker copy": docker_copy,
    }


@pytest.mark.parametrize("folder", ["docker", "aws", "inside", "ssh copy", "docker copy"])
def test_a_credential_folder_is_never_a_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], folder: str
) -> None:
    root = _credential_folders(tmp_path)[folder]
    before = _files_under(root)
    for command in (["index", "--quiet"], ["search", "registry"], ["mcp"]):
        code, out, err = run(capsys, *command, "--repo", str(root))
        assert code == 2 and not out
        assert err.startswith(f"codecite: not indexing: {root} ") and "credential" in err, err
        assert "open a project folder instead" in err
    assert _files_under(root) == before  # no .codecite, nothing written


def test_a_project_with_a_secret_file_is_still_a_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    (repo / ".env").write_text("TOKEN=x\n")
    (repo / "app.py").write_text("def serve_registry():\n    return 1\n")
    (repo / "util.py").write_text("def helper():\n    return 2\n")
    code, out, err = run(capsys, "index", "--quiet", "--repo", str(repo))
    assert code == 0 and "indexed 2 files" in out, err


# --- .codeciteignore re-including git-ignored files ------------------------------------------


def _reincluding_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "app"
    repo.mkdir()
    (repo / ".gitignore").write_text("local_settings.py\nprivate/\n")
    (repo / ".codeciteignore").write_text("!local_settings.py\n!private/\n")
    (repo / "local_settings.py").write_text('DATABASE_PASSWORD = "plover-wombat-quince"\n')
    (repo / "private").mkdir()
    (repo / "private" / "notes.py").write_text('ADMIN_PIN = "plover-4471"\n')
    for n in range(3):
        (repo / f"app_{n}.py").write_text(f"def settings_{n}():\n    return {n}\n")
    return repo


def test_codeciteignore_brings_back_no_git_ignored_file_without_trust(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _reincluding_repo(tmp_path)
    code, out, err = run(capsys, "index", "--quiet", "--repo", str(repo))
    assert code == 0 and "indexed 5 files" in out, err  # 3 modules, .gitignore, .codeciteignore
    for path in ("local_settings.py", "private"):
        assert f"skipped {path}: git ignores it and only .codeciteignore brings it back" in err
    assert "not trusted (set CODECITE_TRUST_REPO_CONFIG=1" in err
    code, out, err = run(capsys, "search", "plover", "--json", "--repo", str(repo))
    assert code == 0 and json.loads(out)["results"] == [], out

    # The user trusts the repository: its re-includes apply.
    monkeypatch.setenv("CODECITE_TRUST_REPO_CONFIG", "1")
    code, out, err = run(capsys, "index", "--quiet", "--repo", str(repo))
    assert code == 0 and "indexed 7 files" in out, err
    code, out, err = run(capsys, "search", "plover", "--json", "--repo", str(repo))
    found = {r["path"] for r in json.loads(out)["results"]}
    assert found == {"local_settings.py", "private/notes.py"}, out


def test_a_repository_cannot_trust_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _reincluding_repo(tmp_path)
    (repo / ".codecite.toml").write_text("repository_trusted = true\n")
    code, _out, err = run(capsys, "index", "--quiet", "--repo", str(repo))
    assert code == 2 and "unknown setting 'repository_trusted'" in err
    assert not (repo / ".codecite").exists()


@pytest.mark.parametrize(
    "folder",
    [".config", ".config/gcloud", ".config/gcloud/legacy_credentials", ".local/share",
     ".local/share/keyrings", ".local"],
)  # fmt: skip
def test_a_home_credential_folder_is_never_a_root(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    folder: str,
) -> None:
    # Issue 42: gcloud's and the keyring's folders say what they are by where they are.
    home = tmp_path / "me"
    gcloud = home / ".config" / "gcloud"
    (gcloud / "legacy_credentials").mkdir(parents=True)
    (gcloud / "application_default_credentials.json").write_text('{"type": "authorized_user"}')
    (gcloud / "active_config").write_text("default\n")
    for n in range(50):  # enough files that the folder is not judged by what it holds
        (gcloud / "legacy_credentials" / f"adc_{n}.txt").write_text("account\n")
    (home / ".local" / "share" / "keyrings").mkdir(parents=True)
    (home / ".local" / "share" / "keyrings" / "login.keyring").write_bytes(b"GnomeKeyring\n")
    monkeypatch.setenv("HOME", str(home))
    root = home / folder
    before = _files_under(root)
    for command in (["index", "--quiet"], ["search", "registry"], ["mcp"]):
        code, out, err = run(capsys, *command, "--repo", str(root))
        assert code == 2 and not out
        assert err.startswith(f"codecite: not indexing: {root} ") and "credentials" in err, err
        assert "open a project folder instead" in err
    assert _files_under(root) == before  # no .codecite, nothing written


def test_a_project_in_the_config_folder_is_a_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "me"
    nvim = home / ".config" / "nvim"
    nvim.mkdir(parents=True)
    (nvim / "init.lua").write_text("vim.opt.number = true\n")
    (home / ".config" / "gcloud").mkdir()
    monkeypatch.setenv("HOME", str(home))
    code, out, err = run(capsys, "index", "--quiet", "--repo", str(nvim))
    assert code == 0 and "indexed 1 files" in out, err
