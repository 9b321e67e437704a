"""Which folders may become workspace roots.

A root is indexed whole and gets a ``.codecite`` folder, and the client alone names it (initialize,
didChangeWorkspaceFolders). A client that names ``/etc`` would have the server read ``shadow``
and write into ``/etc``: system folders and the home folder itself are refused, with a message
saying why. A root whose index folder cannot be written (a checkout owned by another user, an
index another user built in it) is indexed into the user's cache folder instead, and said so; it
is refused in plain words only when that cannot be written either, or ``index_dir`` was chosen.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.config import Config, cached_index_dir

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
    return None


def _home() -> Path | None:
    try:
        return Path.home()
    except RuntimeError:  # no HOME and no passwd entry
        return None


def unwritable(index_dir: Path) -> str | None:
    """Why the index cannot be kept in ``index_dir``, in plain words; None when it can."""
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create the index folder {index_dir} ({exc.strerror or exc})"
    if not os.access(index_dir, os.W_OK | os.X_OK):
        return f"cannot write to the index folder {index_dir} (permission denied)"
    return None


def cache_instead(root: Path, config: Config) -> Path | None:
    """The user's cache folder for the index of a root whose own index folder cannot be
    written; None when the user chose ``index_dir``, or the cache cannot be written either."""
    if config.index_dir:
        return None
    cached = cached_index_dir(root)
    return cached if cached is not None and unwritable(cached) is None else None
