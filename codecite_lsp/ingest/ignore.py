"""The ignore rules: which paths of a repository are never indexed, decided per path.

``IgnoreRules`` is cheap enough for the watcher to call on every file-system event, and ``scan``
uses the same object, so a scan and the watcher never disagree.

Precedence of the ignore rules, strongest first:

1. always skipped: ``.git``, the index folder, secret folders (``.ssh``, ``.aws`` ...) and secret
   file names (``is_secret_path``) — even when git tracks them; nothing re-includes these;
2. ``.codeciteignore`` at the repository root (gitignore syntax): the last pattern matching the
   path (or one of its folders) decides, so ``!build/`` re-includes a folder that .gitignore or
   the built-in list excludes. A negation below an excluded folder (``!build/keep.py``) works when
   anchored (it has a ``/``): that folder is then walked and only the re-included paths come back;
   an unanchored negation (``!*.py``) only acts in folders that are walked anyway. A negation
   that would bring back a file git ignores (``!local_settings.py``: often the user's own
   secrets) needs the user's trust in the repository's settings, as ``model`` does; without it
   the file stays out and is reported as such (``REASON_UNTRUSTED``);
3. the built-in vendored/build folders (``VENDORED_DIRS``);
4. ``.gitignore`` files, the deepest folder first, each anchored at its own folder, then
   ``.git/info/exclude``, then the user's global excludes file (``core.excludesFile``, else
   ``~/.config/git/ignore``: where many keep ``.env.local`` or their notes). As in git, nothing
   inside an excluded folder comes back.

Not read: .gitignore files above the repository folder, a .gitignore or .codeciteignore that is
a symlink (git does not follow one either), an ignore file that is not a regular file or is over
8 MB (said in the log), and git's index (a file git tracks although .gitignore matches it is
excluded). The only git process started is one ``git config``
per load, for where the global excludes file is.
Symlinked files are followed when they resolve inside the repository (to a file that is neither
ignored nor secret); symlinked folders are never followed — their target is scanned where it
lives, so nothing is indexed twice and a loop cannot hang the walk.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import threading
import time
from enum import Enum
from pathlib import Path

import pathspec

from ..core.config import TRUST_ENV
from ..core.files import read_regular
from .paths import relative_inside
from .secrets import SECRET_DIRS, is_secret_path

log = logging.getLogger(__name__)

# Third-party or build output: never the code the user asks about, and often huge. Any folder
# holding a pyvenv.cfg (a virtualenv, whatever its name) is skipped too.
VENDORED_DIRS = frozenset(
    {
        "node_modules", "bower_components", "jspm_packages", "vendor", "site-packages",
        "dist", "build", "_build", "target", "out-tsc", ".venv", "__pycache__",
        ".tox", ".nox", ".eggs", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis",
        ".cache", ".gradle", ".idea", ".next", ".nuxt", ".svelte-kit", ".parcel-cache",
        ".turbo", ".terraform", ".dart_tool", ".angular", ".bundle", ".direnv", ".serverless",
        "htmlcov", "coverage", "Pods", ".hg", ".svn", ".codecite",
    }
)  # fmt: skip

_EXCLUDE_FILE = ".git/info/exclude"
_GIT_CONFIG_TIMEOUT = 5.0  # seconds for `git config` (a hung credential helper never runs there)
# What decides where git's global configuration and excludes file are.
_GIT_ENV = (
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
)
_EXCLUDES_SECONDS = 30.0  # a changed core.excludesFile is seen within this
_EXCLUDES: dict[tuple[str | None, ...], tuple[float, str | None]] = {}
_EXCLUDES_LOCK = threading.Lock()

REASON_UNTRUSTED = (
    "git ignores it and only .codeciteignore brings it back, but this repository's settings are "
    f"not trusted (set {TRUST_ENV}=1 or trust the workspace in your editor to index it)"
)


class _Dir(Enum):
    INCLUDED = "included"
    HIDDEN = "hidden"  # excluded, but walked: .codeciteignore may re-include something below
    PRUNED = "pruned"


def _compile(lines: list[str], source: str) -> pathspec.GitIgnoreSpec | None:
    """A spec from gitignore lines; a malformed line is dropped (and logged), never fatal."""
    kept = []
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except (ValueError, TypeError) as exc:
            log.warning("%s: ignoring invalid pattern %r (%s)", source, line, exc)
            continue
        kept.append(line)
    spec = pathspec.GitIgnoreSpec.from_lines(kept)
    return spec if any(p.include is not None for p in spec.patterns) else None


def _read_lines(path: str, follow: bool = True) -> list[str] | None:
    """The file's lines; None if it is missing or cannot be read (said: a FIFO, a link to a
    device, a file over 8 MB; with ``follow`` False a symlink, which git does not read for a
    .gitignore either)."""
    if path == os.devnull:  # `core.excludesFile = /dev/null`: the way to say "none"
        return None
    try:
        data, _ = read_regular(path, follow=follow)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        log.warning("not reading ignore file %s: %s", path, exc)
        return None
    return data.decode("utf-8", errors="replace").splitlines()


def _anchored_negation_prefixes(lines: list[str]) -> tuple[str, ...]:
    """Literal folder prefixes of anchored ``!`` patterns: ``!build/gen/*.py`` -> ``build/gen/``."""
    prefixes = []
    for raw in lines:
        line = raw.strip()
        if not line.startswith("!") or "/" not in line[1:].rstrip("/"):
            continue
        body = line[1:].lstrip("/")
        literal = re.split(r"[*?\[\\]", body, maxsplit=1)[0]
        prefixes.append(literal[: literal.rfind("/") + 1])
    return tuple(prefixes)


def _git_dir(root: str) -> str | None:
    """The repository's git folder: ``.git``, or where a worktree/submodule ``.git`` file points."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    lines = _read_lines(dot_git)
    if not lines or not lines[0].startswith("gitdir:"):
        return None
    git_dir = os.path.join(root, lines[0][len("gitdir:") :].strip())
    common = _read_lines(os.path.join(git_dir, "commondir"))  # worktrees share info/exclude
    return os.path.join(git_dir, common[0].strip()) if common else git_dir


def global_excludes_file(root: str) -> str | None:
    """The user's global git excludes file, as git finds it: ``core.excludesFile`` from the git
    configuration (asked of git itself: includes and conditional includes apply), else
    ``$XDG_CONFIG_HOME/git/ignore`` or ``~/.config/git/ignore``; None without a home.

    Remembered for a few seconds per root and environment: the rules are loaded per request
    (service/privacy.py), and a `git` process per search would be work done again and again."""
    key = (root, *(os.environ.get(name) for name in _GIT_ENV))
    now = time.monotonic()
    with _EXCLUDES_LOCK:
        found = _EXCLUDES.get(key)
        if found is not None and now - found[0] < _EXCLUDES_SECONDS:
            return found[1]
    path = _ask_excludes_file(root)
    with _EXCLUDES_LOCK:
        _EXCLUDES[key] = (now, path)
    return path


def _ask_excludes_file(root: str) -> str | None:
    try:
        asked = subprocess.run(
            ["git", "-C", root, "config", "--path", "--get", "core.excludesFile"],
            capture_output=True,
            text=True,
            timeout=_GIT_CONFIG_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git: its default place still applies
        asked = None
    if asked is not None and asked.returncode == 0 and asked.stdout.strip():
        return os.path.join(root, os.path.expanduser(asked.stdout.strip()))
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return None if config_home.startswith("~") else os.path.join(config_home, "git", "ignore")


def _root_rules(
    root: str,
) -> tuple[pathspec.GitIgnoreSpec | None, tuple[str, ...], pathspec.GitIgnoreSpec | None]:
    """The repository-wide rules: .codeciteignore (and the folders it re-includes), then git's
    info/exclude over the user's global excludes (read first, so info/exclude wins, as in git)."""
    codecite_lines = _read_lines(os.path.join(root, ".codeciteignore"), follow=False) or []
    git_dir = _git_dir(root)
    excludes = global_excludes_file(root)
    exclude_lines = [
        *((_read_lines(excludes) if excludes else None) or []),
        *((_read_lines(os.path.join(git_dir, "info", "exclude")) if git_dir else None) or []),
    ]
    return (
        _compile(codecite_lines, ".codeciteignore"),
        _anchored_negation_prefixes(codecite_lines),
        _compile(exclude_lines, _EXCLUDE_FILE),
    )


class IgnoreRules:
    """Path-only exclusion decisions (no content is read), shared by ``scan`` and the watcher.

    Nested .gitignore files are read lazily, once per folder; folder verdicts are cached, so a
    per-event check costs a few dictionary look-ups. Thread-safe.
    """

    def __init__(
        self,
        root: str,
        codecite: pathspec.GitIgnoreSpec | None,
        reinclude_prefixes: tuple[str, ...],
        exclude: pathspec.GitIgnoreSpec | None,
        index_rel: str | None,
        trusted: bool = False,
    ) -> None:
        self.root = root
        self._trusted = trusted
        self._untrusted: set[str] = set()  # folders whose re-include was refused
        self._codecite = codecite
        self._reinclude_prefixes = reinclude_prefixes
        self._exclude = exclude
        self._index_rel = index_rel
        self._gitignores: dict[str, pathspec.GitIgnoreSpec | None] = {}
        self._dirs: dict[str, _Dir] = {}
        self._lock = threading.RLock()

    @classmethod
    def load(
        cls, repo: Path, *, index_dir: Path | None = None, trusted: bool = False
    ) -> IgnoreRules:
        root = os.path.realpath(repo)
        index_rel = None
        if index_dir is not None:
            index_rel = relative_inside(root, os.path.realpath(index_dir))
        return cls(root, *_root_rules(root), index_rel or None, trusted)

    def is_ignored(self, rel_path: str, is_dir: bool = False) -> bool:
        return self.why_ignored(rel_path, is_dir) is not None

    def why_ignored(self, rel_path: str, is_dir: bool = False) -> str | None:
        """None if the path is indexed; "secret", "untrusted" (a re-include refused: see
        REASON_UNTRUSTED) or "ignored" otherwise (scan reports the first two)."""
        rel = rel_path.strip("/")
        if rel.startswith("./"):
            rel = rel[2:]
        if not rel or rel == ".":
            return None
        with self._lock:
            parent = self._dir_state(rel.rpartition("/")[0])
            if parent is _Dir.PRUNED:
                return "ignored"
            name = rel.rpartition("/")[2]
            if name == ".git" or rel == self._index_rel:
                return "ignored"
            if is_dir and name.lower() in SECRET_DIRS:
                return "secret"
            if is_dir:
                if self._dir_state(rel) is _Dir.INCLUDED:
                    return None
                return "untrusted" if rel in self._untrusted else "ignored"
            verdict = self._excluded(rel, False, parent is _Dir.HIDDEN)
            if verdict is not None:
                return verdict
            return "secret" if is_secret_path(rel) else None

    def walks(self, rel_dir: str) -> bool:
        """Whether a scan enters the folder: not ignored, or .codeciteignore re-includes below."""
        with self._lock:
            return self._dir_state(rel_dir.strip("/")) is not _Dir.PRUNED

    def refresh(self, rel_path: str) -> bool:
        """Take a changed path into account if it changes the rules; True if it did.

        Ignore files are re-read; a ``pyvenv.cfg`` (a new virtualenv) re-judges its folder.
        """
        rel = rel_path.strip("/")
        folder, _, name = rel.rpartition("/")
        with self._lock:
            if rel == ".codeciteignore" or rel == _EXCLUDE_FILE:
                self._codecite, self._reinclude_prefixes, self._exclude = _root_rules(self.root)
            elif name == ".gitignore":
                self._gitignores.pop(folder, None)
            elif name != "pyvenv.cfg":
                return False
            self._dirs.clear()
            self._untrusted.clear()
            return True

    # --- decisions (callers hold the lock) ---------------------------------------------------

    def _dir_state(self, rel: str) -> _Dir:
        if not rel:
            return _Dir.INCLUDED
        state = self._dirs.get(rel)
        if state is None:
            parent = self._dir_state(rel.rpartition("/")[0])
            name = rel.rpartition("/")[2]
            if (
                parent is _Dir.PRUNED
                or name == ".git"
                or name.lower() in SECRET_DIRS
                or rel == self._index_rel
            ):
                state = _Dir.PRUNED
            elif (verdict := self._excluded(rel, True, parent is _Dir.HIDDEN)) is None:
                state = _Dir.INCLUDED
            elif verdict == "untrusted":  # all below is git-ignored too
                self._untrusted.add(rel)
                state = _Dir.PRUNED
            elif self._may_reinclude_below(rel):
                state = _Dir.HIDDEN
            else:
                state = _Dir.PRUNED
            self._dirs[rel] = state
        return state

    def _excluded(self, rel: str, is_dir: bool, inside_excluded: bool) -> str | None:
        """The pattern layers' verdict for one path whose folder is walked: None (included),
        "ignored", or "untrusted" (re-included by .codeciteignore alone, git ignores it)."""
        suffix = "/" if is_dir else ""
        if self._codecite is not None:
            verdict = self._codecite.check_file(rel + suffix).include
            if verdict:
                return "ignored"
            if verdict is not None:
                return None if self._trusted or not self._git_ignored(rel, is_dir) else "untrusted"
        if inside_excluded:
            return "ignored"
        parts = rel.split("/")
        if parts[-1].endswith(".egg-info") or (is_dir and self._is_vendored_dir(rel)):
            return "ignored"
        return "ignored" if self._git_excluded(rel, is_dir) else None

    def _git_ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether git ignores the path: itself or one of its folders (as in git, nothing
        inside an ignored folder comes back)."""
        parts = rel.split("/")
        return any(
            self._git_excluded("/".join(parts[:end]), end < len(parts) or is_dir)
            for end in range(1, len(parts) + 1)
        )

    def _git_excluded(self, rel: str, is_dir: bool) -> bool:
        """The .gitignore files' and .git/info/exclude's verdict on the path itself."""
        suffix = "/" if is_dir else ""
        parts = rel.split("/")
        for depth in range(len(parts) - 1, -1, -1):
            spec = self._gitignore("/".join(parts[:depth]))
            if spec is not None:
                verdict = spec.check_file("/".join(parts[depth:]) + suffix).include
                if verdict is not None:
                    return verdict
        if self._exclude is not None:
            return bool(self._exclude.check_file(rel + suffix).include)
        return False

    def _is_vendored_dir(self, rel_dir: str) -> bool:
        # A virtualenv is known by its pyvenv.cfg, not its name: the stdlib has a "venv" package.
        name = rel_dir.rpartition("/")[2]
        return name in VENDORED_DIRS or os.path.isfile(
            os.path.join(self.root, rel_dir, "pyvenv.cfg")
        )

    def _may_reinclude_below(self, rel_dir: str) -> bool:
        folder = rel_dir + "/"
        return any(p.startswith(folder) or folder.startswith(p) for p in self._reinclude_prefixes)

    def _gitignore(self, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        if rel_dir not in self._gitignores:
            path = os.path.join(self.root, rel_dir, ".gitignore")
            lines = _read_lines(path, follow=False)
            self._gitignores[rel_dir] = _compile(lines, path) if lines else None
        return self._gitignores[rel_dir]
