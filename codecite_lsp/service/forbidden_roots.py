"""Which folders may be served as a repository, for the CLI, the language server and MCP alike.

A root is indexed whole and gets a ``.codecite`` folder, and the user or the client alone names
it. A root of ``/etc`` would have ``shadow`` read and ``/etc`` written, a root of ``~/.docker``
its registry credentials indexed: system folders, the home folder itself, credential folders by
name (``.ssh``, ``.aws``, ``.docker`` ... and anything inside them), by their place in the home
folder (``~/.config/gcloud``, ``~/.local/share/keyrings`` ... and the folders holding them) and
folders whose files are mostly credentials by name or content are refused, with a message
saying why.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..ingest.secrets import SECRET_DIRS, find_credential, has_private_key, is_secret_path

# Never a project, nor anything below them.
_SYSTEM_TREES = ("/etc", "/proc", "/sys", "/dev", "/boot", "/run", "/bin", "/sbin", "/lib",
                 "/lib32", "/lib64", "/libx32", "/usr/bin", "/usr/sbin", "/usr/lib",
                 "/usr/lib32", "/usr/lib64", "/usr/libexec", "/usr/include", "/usr/share",
                 "/var/lib", "/var/log", "/var/cache", "/var/spool", "/var/run", "/var/mail",
                 "/lost+found")  # fmt: skip
# Hold projects below them (/var/www/site, /usr/local/src/x, /tmp/x, /home/me/x), never
# themselves.
_SYSTEM_FOLDERS = ("/", "/usr", "/usr/local", "/var", "/opt", "/srv", "/home", "/root", "/tmp",
                   "/mnt", "/media", "/snap", "/nix", "/Users", "/Volumes", "/private",
                   "/Library", "/System", "/Applications")  # fmt: skip
# Credential folders at fixed places below the home folder, whose names (``gcloud``,
# ``keyrings``) say nothing anywhere else: refused with everything inside them, and so are the
# folders holding them (``~/.config``, ``~/.local/share``); ``~/.config/nvim`` is a project.
_HOME_CREDENTIAL_DIRS = (".config/gcloud", ".config/gh", ".config/containers",
                         ".local/share/keyrings")  # fmt: skip
# A credential folder holds a handful of files; a folder with more is judged a project. The
# sample is read at once when a root is added, so it stays small.
_SAMPLE_FILES = 40
_SAMPLE_DEPTH = 3
_SAMPLE_BYTES = 65_536


def refusal(root: Path, home: Path | None = None) -> str | None:
    """Why ``root`` (resolved) must not be a workspace root, or None when it may be one."""
    home = home if home is not None else _home()
    home = home.resolve() if home is not None else None
    text = root.as_posix()
    if text in _SYSTEM_FOLDERS or text in _SYSTEM_TREES or root == Path(root.anchor):
        return f"{root} is a system folder; open a project folder instead"
    tree = next((tree for tree in _SYSTEM_TREES if text.startswith(tree + "/")), None)
    if tree is not None:
        return f"{root} is inside the system folder {tree}; open a project folder instead"
    if root == home:
        return f"{root} is your home folder; open a project folder instead"
    if home is not None and root in home.parents:
        return f"{root} holds your home folder; open a project folder instead"
    if home is not None:
        problem = _home_credentials(root, home)
        if problem is not None:
            return problem
    secret = next((part for part in root.parts if part.lower() in SECRET_DIRS), None)
    if secret is not None:
        where = "is" if root.name == secret else f"is inside {secret}, which is"
        return f"{root} {where} a credentials folder; open a project folder instead"
    found = _credential_files(root)
    if found is not None and 2 * found[0] > found[1]:
        return (
            f"{root} holds credentials ({found[0]} of its {found[1]} files are keys or "
            "credential files); open a project folder instead"
        )
    return None


def _home_credentials(root: Path, home: Path) -> str | None:
    """Why ``root`` is, is inside or holds one of the home folder's credential folders."""
    for folder in (home / rel for rel in _HOME_CREDENTIAL_DIRS):
        if root == folder:
            return f"{root} is a credentials folder; open a project folder instead"
        if folder in root.parents:
            return (
                f"{root} is inside {folder}, which is a credentials folder; "
                "open a project folder instead"
            )
        if root in folder.parents:
            return f"{root} holds the credentials folder {folder}; open a project folder instead"
    return None


def _credential_files(root: Path) -> tuple[int, int] | None:
    """(credential files, files) of a small folder; None for a folder too big to be a key store."""
    files: list[str] = []
    pending = [("", 0)]
    while pending:
        folder, depth = pending.pop()
        try:
            with os.scandir(os.path.join(root, folder)) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            try:
                if entry.name == ".git" or entry.is_symlink():
                    continue
                if entry.is_dir() and depth < _SAMPLE_DEPTH:
                    pending.append((rel, depth + 1))
                elif entry.is_file():
                    files.append(rel)
            except OSError:
                continue
            if len(files) > _SAMPLE_FILES:
                return None
    held = sum(is_secret_path(rel) or _holds_credential(root / rel) for rel in files)
    return held, len(files)


def _holds_credential(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            text = handle.read(_SAMPLE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    return has_private_key(text) or find_credential(text) is not None


def _home() -> Path | None:
    try:
        return Path.home()
    except RuntimeError:  # no HOME and no passwd entry
        return None
