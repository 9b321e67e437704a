"""Which files of a repository are indexed, and reading one of them safely.

``scan`` lists the files git would track (plus untracked ones that are not ignored), minus secrets
and vendored/build folders. ``IgnoreRules`` holds the same decision per path, cheap enough for the
watcher to call on every file-system event, so a scan and the watcher never disagree.
``read_source`` reads one file once and refuses what must not reach the index or a model:
besides secret names, a file holding a private key or a high-confidence credential
(``find_credential``: AWS, GitHub, Slack, Stripe, OpenAI, Anthropic, Google formats) is skipped
whole, never redacted, so every chunk stays equal to the file's lines.

Precedence of the ignore rules, strongest first:

1. always skipped: ``.git``, the index folder, secret folders (``.ssh``, ``.aws`` ...) and secret
   file names (``is_secret_path``) — even when git tracks them; nothing re-includes these;
2. ``.codeciteignore`` at the repository root (gitignore syntax): the last pattern matching the
   path (or one of its folders) decides, so ``!build/`` re-includes a folder that .gitignore or
   the built-in list excludes. A negation below an excluded folder (``!build/keep.py``) works when
   anchored (it has a ``/``): that folder is then walked and only the re-included paths come back;
   an unanchored negation (``!*.py``) only acts in folders that are walked anyway;
3. the built-in vendored/build folders (``VENDORED_DIRS``);
4. ``.gitignore`` files, the deepest folder first, each anchored at its own folder, then
   ``.git/info/exclude``. As in git, nothing inside an excluded folder comes back.

Not read: the user's global git excludes, .gitignore files above the repository folder, and git's
index (a file git tracks although .gitignore matches it is excluded; no git process is started).
Symlinked files are followed when they resolve inside the repository (to a file that is neither
ignored nor secret); symlinked folders are never followed — their target is scanned where it
lives, so nothing is indexed twice and a loop cannot hang the walk.
"""

from __future__ import annotations

import errno
import logging
import os
import posixpath
import re
import stat
import threading
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import pathspec

from .config import Config
from .models import file_revision

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
# Folders whose every file holds credentials.
SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker"})

_EXCLUDE_FILE = ".git/info/exclude"

_SECRET_NAMES = frozenset(
    {
        "credentials", ".npmrc", ".pypirc", ".netrc", "_netrc", ".htpasswd", ".pgpass",
        ".git-credentials", ".dockercfg", ".s3cfg", ".boto", ".vault-token",
    }
)  # fmt: skip
_SECRET_SUFFIXES = (
    ".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".kdbx", ".tfstate",
    ".tfstate.backup", ".tfvars", ".credentials", ".env",
)  # fmt: skip
_KEY_FILE_PREFIXES = ("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")
# Data formats a secret is stored in; "secrets.py" (stdlib) or "secret_manager.ts" are code.
_DATA_SUFFIXES = (
    ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".xml", ".properties", ".txt",
)  # fmt: skip

_LOCKFILES = frozenset(
    {
        "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb",
        "poetry.lock", "Pipfile.lock", "uv.lock", "pdm.lock", "composer.lock", "Gemfile.lock",
        "Cargo.lock", "go.sum", "flake.lock", "mix.lock", "pubspec.lock", "Podfile.lock",
    }
)  # fmt: skip

BINARY_SNIFF_BYTES = 8192
GENERATED_MARKER_LINES = 5
_GENERATED_RE = re.compile(r"@generated\b|\bDO NOT EDIT\b")
# The marker only counts in a comment or docstring, not in code that merely mentions it.
_COMMENT_OPENERS = ("#", "//", "/*", "*", "--", ";", "<!--", '"""', "'''", "%", "(*", "{-")
# A whole private key, not a parser's constant: the BEGIN line followed by base64 key material
# (through real newlines or "\n" escapes inside a string literal, after optional PEM headers).
_PRIVATE_KEY_RE = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:\s|\\[nr])+(?:[\w-]+: [^\n\\]*(?:\s|\\[nr])+)*[A-Za-z0-9+/]{16,}"
)

# Credentials in formats precise enough that ordinary code never matches them: a file holding
# one is skipped whole (never redacted: chunk text must equal the file's lines for citations to
# verify). A cold index reads every file, so each group of formats has cheap hints first: a
# pattern with a literal prefix is searched fast (sre skips to the prefix), and most files hold
# none of these, so the format patterns run on few files.
# Anthropic precedes OpenAI: "sk-ant-..." also fits the OpenAI shape.
_CREDENTIAL_GROUPS = tuple(
    (
        tuple(re.compile(hint) for hint in hints),
        tuple((kind, re.compile(pattern)) for kind, pattern in formats),
    )
    for hints, formats in (
        (
            ("A(?:KIA|SIA|Iza)",),
            (
                ("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
                ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
            ),
        ),
        (
            ("ecret", "ECRET"),
            (
                (
                    "AWS secret access key",
                    r"(?i:aws_?secret_?(?:access_?)?key)[\"']?\s*(?::|=>?)\s*[\"']?"
                    r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
                ),
            ),
        ),
        (
            ("g(?:h[pousr]_|ithub_pat_)",),
            (("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,}|\bgithub_pat_[A-Za-z0-9_]{60,}"),),
        ),
        (("xox",), (("Slack token", r"\bxox[abposr]-[0-9A-Za-z-]{10,}"),)),
        (("k_live_",), (("Stripe live key", r"\b[sr]k_live_[0-9A-Za-z]{20,}"),)),
        (
            ("sk-",),
            (
                ("Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{40,}"),
                ("OpenAI API key", r"\bsk-(?:proj-)?[A-Za-z0-9_-]{40,}"),
            ),
        ),
    )
)
# A documented example (AWS's AKIAIOSFODNN7EXAMPLE) or a filler such as "ghp_xxxx...xxxx" is
# not a credential; a random token of these lengths has far more distinct characters.
_PLACEHOLDER_WORD = "EXAMPLE"
_PLACEHOLDER_MAX_DISTINCT = 9


@dataclass(frozen=True)
class Credential:
    kind: str  # e.g. "AWS access key id"
    line: int  # 1-based

    @property
    def reason(self) -> str:
        return f"contains a credential ({self.kind}) at line {self.line}; never indexed"


def find_credential(text: str) -> Credential | None:
    """The first high-confidence credential in ``text`` (placeholders aside), or None."""
    found = [
        (match.start(), kind)
        for hints, formats in _CREDENTIAL_GROUPS
        if any(hint.search(text) for hint in hints)
        for kind, pattern in formats
        if (match := _first_real(pattern, text)) is not None
    ]
    if not found:
        return None
    offset, kind = min(found, key=lambda item: item[0])  # on a tie, the format listed first
    return Credential(kind, text.count("\n", 0, offset) + 1)


def _first_real(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    for match in pattern.finditer(text):
        token = match.groupdict().get("value") or match.group()  # a value, not its name
        if _PLACEHOLDER_WORD not in token.upper() and len(set(token)) > _PLACEHOLDER_MAX_DISTINCT:
            return match
    return None


REASON_SECRET_NAME = "secret file (name matches a credentials pattern); never indexed"
REASON_SECRET_DIR = "secret folder (holds credentials); never indexed"
REASON_PRIVATE_KEY = "contains a private key (PEM block); never indexed"
REASON_BINARY = "binary file (NUL byte in the first 8 KiB)"
REASON_NOT_UTF8 = "not valid UTF-8"
REASON_MINIFIED = "minified or generated (a line longer than max_line_length)"
REASON_GENERATED = "generated file (marker in the first lines)"
REASON_LOCKFILE = "lockfile (generated)"
REASON_NOT_REGULAR = "not a regular file"
REASON_VANISHED = "vanished (no longer exists)"
REASON_UNREADABLE = "unreadable"
REASON_SYMLINK_OUT = "symlink leaves the repository"
REASON_SYMLINK_LOOP = "symlink loop"
REASON_SYMLINK_BROKEN = "broken symlink"
REASON_SYMLINK_SECRET = "symlink to an ignored or secret file"
REASON_SYMLINK_DIR = "symlinked folder not followed (its target is scanned where it lives)"
REASON_BAD_PATH = "not a path inside the repository"


@dataclass(frozen=True)
class Skip:
    path: str
    reason: str


@dataclass(frozen=True)
class WorkspaceFile:
    path: str  # repo-relative, "/" separators
    size: int
    mtime_ns: int


@dataclass
class ScanResult:
    files: list[WorkspaceFile]
    skipped: list[Skip]


@dataclass(frozen=True)
class SourceFile:
    path: str
    text: str  # decoded, UTF-8 BOM removed, line endings untouched
    revision: str  # file_revision of the raw bytes
    size: int
    mtime_ns: int


def is_secret_path(rel_path: str) -> bool:
    """True for paths that hold credentials by name.

    Every ``.env`` variant is a secret, ``.env.example`` included: templates are often filled in
    by mistake, and a missing example costs the user nothing.
    """
    parts = rel_path.lower().split("/")
    if any(part in SECRET_DIRS for part in parts[:-1]):
        return True
    name = parts[-1]
    if name in _SECRET_NAMES or name.startswith(".env") or name.startswith(_KEY_FILE_PREFIXES):
        return True
    if name.endswith(_SECRET_SUFFIXES):
        return True
    if name.endswith(_DATA_SUFFIXES):
        stem = name.rsplit(".", 1)[0]
        return (
            "secret" in stem
            or stem == "credentials"
            or "service-account" in stem
            or "service_account" in stem
        )
    return False


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


def _read_lines(path: str) -> list[str] | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        log.warning("cannot read ignore file %s: %s", path, exc)
        return None


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
    ) -> None:
        self.root = root
        self._codecite = codecite
        self._reinclude_prefixes = reinclude_prefixes
        self._exclude = exclude
        self._index_rel = index_rel
        self._gitignores: dict[str, pathspec.GitIgnoreSpec | None] = {}
        self._dirs: dict[str, _Dir] = {}
        self._lock = threading.RLock()

    @classmethod
    def load(cls, repo: Path, *, index_dir: Path | None = None) -> IgnoreRules:
        root = os.path.realpath(repo)
        codecite_lines = _read_lines(os.path.join(root, ".codeciteignore")) or []
        git_dir = _git_dir(root)
        exclude_lines = (
            _read_lines(os.path.join(git_dir, "info", "exclude")) if git_dir else None
        ) or []
        index_rel = None
        if index_dir is not None:
            index_rel = _relative_inside(root, os.path.realpath(index_dir))
        return cls(
            root,
            _compile(codecite_lines, ".codeciteignore"),
            _anchored_negation_prefixes(codecite_lines),
            _compile(exclude_lines, _EXCLUDE_FILE),
            index_rel or None,
        )

    def is_ignored(self, rel_path: str, is_dir: bool = False) -> bool:
        return self.why_ignored(rel_path, is_dir) is not None

    def why_ignored(self, rel_path: str, is_dir: bool = False) -> str | None:
        """None if the path is indexed; "secret" or "ignored" otherwise (scan reports secrets)."""
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
                return None if self._dir_state(rel) is _Dir.INCLUDED else "ignored"
            if self._excluded(rel, False, parent is _Dir.HIDDEN):
                return "ignored"
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
                fresh = IgnoreRules.load(Path(self.root))
                self._codecite = fresh._codecite
                self._reinclude_prefixes = fresh._reinclude_prefixes
                self._exclude = fresh._exclude
            elif name == ".gitignore":
                self._gitignores.pop(folder, None)
            elif name != "pyvenv.cfg":
                return False
            self._dirs.clear()
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
            elif not self._excluded(rel, True, parent is _Dir.HIDDEN):
                state = _Dir.INCLUDED
            elif self._may_reinclude_below(rel):
                state = _Dir.HIDDEN
            else:
                state = _Dir.PRUNED
            self._dirs[rel] = state
        return state

    def _excluded(self, rel: str, is_dir: bool, inside_excluded: bool) -> bool:
        """The pattern layers' verdict for one path whose folder is walked."""
        suffix = "/" if is_dir else ""
        if self._codecite is not None:
            verdict = self._codecite.check_file(rel + suffix).include
            if verdict is not None:
                return verdict
        if inside_excluded:
            return True
        parts = rel.split("/")
        if parts[-1].endswith(".egg-info") or (is_dir and self._is_vendored_dir(rel)):
            return True
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
            lines = _read_lines(path)
            self._gitignores[rel_dir] = _compile(lines, path) if lines else None
        return self._gitignores[rel_dir]


# --- scanning ---------------------------------------------------------------------------------


def _relative_inside(root: str, real: str) -> str | None:
    """``real`` relative to ``root`` with "/" separators, or None when it lies outside."""
    if real == root:
        return ""
    prefix = root if root.endswith(os.sep) else root + os.sep
    if not real.startswith(prefix):
        return None
    return real[len(prefix) :].replace(os.sep, "/")


def _too_large(size: int, config: Config) -> str:
    if size <= config.max_file_bytes:
        return ""
    return f"too large ({size / 1_048_576:.1f} MB > max_file_bytes {config.max_file_bytes} bytes)"


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _resolve(root: str, path: str) -> tuple[str, str]:
    """Follow symlinks; the real path and its repo-relative form, or _Refused."""
    rel = _relative_inside(root, path)
    if rel and _no_links_below(root, rel):
        return path, rel
    try:
        real = os.path.realpath(path, strict=True)
    except FileNotFoundError:
        raise _Refused(REASON_SYMLINK_BROKEN if os.path.islink(path) else REASON_VANISHED) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Refused(REASON_SYMLINK_LOOP) from None
        raise _Refused(f"{REASON_UNREADABLE} ({exc.strerror})") from None
    real_rel = _relative_inside(root, real)
    if real_rel is None:
        raise _Refused(REASON_SYMLINK_OUT)
    return real, real_rel


def _no_links_below(root: str, rel: str) -> bool:
    """Whether every part of ``rel`` under the (real) root exists and none is a symlink: one
    lstat per part, where realpath() would also walk every folder above the root."""
    path = root
    for part in rel.split("/"):
        path = os.path.join(path, part)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return False
        except OSError:
            return False  # realpath() tells what is wrong
    return True


def _scan_symlink(
    root: str, rel: str, path: str, rules: IgnoreRules, config: Config
) -> WorkspaceFile | Skip:
    try:
        real, real_rel = _resolve(root, path)
    except _Refused as refused:
        return Skip(rel, refused.reason)
    if os.path.isdir(real):
        # A link to one of its own folders would make the tree infinite.
        inside = rel.startswith(real_rel + "/") or not real_rel
        return Skip(rel, REASON_SYMLINK_LOOP if inside else REASON_SYMLINK_DIR)
    if is_secret_path(real_rel) or rules.is_ignored(real_rel):
        return Skip(rel, REASON_SYMLINK_SECRET)
    return _scan_file(rel, real, config)


def _scan_file(rel: str, path: str, config: Config) -> WorkspaceFile | Skip:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Skip(rel, REASON_VANISHED)
    except OSError as exc:
        return Skip(rel, f"{REASON_UNREADABLE} ({exc.strerror})")
    if not stat.S_ISREG(st.st_mode):
        return Skip(rel, REASON_NOT_REGULAR)
    too_large = _too_large(st.st_size, config)
    return Skip(rel, too_large) if too_large else WorkspaceFile(rel, st.st_size, st.st_mtime_ns)


def scan(repo: Path, config: Config) -> ScanResult:
    """Every file to index, sorted by path, and the files refused by path, size or link."""
    root = os.path.realpath(repo)
    rules = IgnoreRules.load(repo, index_dir=config.resolved_index_dir(repo))
    files: list[WorkspaceFile] = []
    skipped: list[Skip] = []
    pending = [""]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(os.path.join(root, folder)) as it:
                entries = list(it)
        except OSError as exc:
            skipped.append(Skip(folder or ".", f"unreadable folder ({exc.strerror})"))
            continue
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            outcome = _scan_entry(root, rel, entry, rules, config)
            if outcome == "dir":
                pending.append(rel)
            elif isinstance(outcome, WorkspaceFile):
                files.append(outcome)
            elif isinstance(outcome, Skip):
                skipped.append(outcome)
    files.sort(key=lambda f: f.path)
    skipped.sort(key=lambda s: s.path)
    return ScanResult(files, skipped)


def _scan_entry(
    root: str, rel: str, entry: os.DirEntry[str], rules: IgnoreRules, config: Config
) -> WorkspaceFile | Skip | str | None:
    """One directory entry: "dir" to walk into, a file, a Skip, or None (silently ignored)."""
    try:
        is_dir = entry.is_dir()
    except OSError:  # a looping symlink
        is_dir = False
    why = rules.why_ignored(rel, is_dir)
    if why == "secret":
        return Skip(rel, REASON_SECRET_DIR if is_dir else REASON_SECRET_NAME)
    if is_dir and not entry.is_symlink():
        return "dir" if rules.walks(rel) else None
    if why is not None:
        return None
    if entry.is_symlink():
        return _scan_symlink(root, rel, entry.path, rules, config)
    return _scan_file(rel, entry.path, config)


# --- reading ----------------------------------------------------------------------------------


def _clean_rel(rel_path: str) -> str | None:
    if not rel_path or "\0" in rel_path or os.path.isabs(rel_path):
        return None
    rel = posixpath.normpath(rel_path.replace(os.sep, "/"))
    if rel == "." or rel == ".." or rel.startswith("../"):
        return None
    return rel


def _read_bounded(path: str, config: Config) -> tuple[bytes, os.stat_result]:
    """The file's bytes and stat, refusing anything but a regular file within the size limit."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise _Refused(REASON_VANISHED) from None
    except PermissionError:
        raise _Refused(f"{REASON_UNREADABLE} (permission denied)") from None
    except OSError as exc:
        raise _Refused(f"{REASON_UNREADABLE} ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _Refused(REASON_NOT_REGULAR)
        too_large = _too_large(st.st_size, config)
        if too_large:
            raise _Refused(too_large)
        try:
            data = handle.read(config.max_file_bytes + 1)  # +1: it may have grown since fstat
        except OSError as exc:
            raise _Refused(f"{REASON_UNREADABLE} ({exc.strerror})") from None
    too_large = _too_large(len(data), config)
    if too_large:
        raise _Refused(too_large)
    return data, st


def _content_problem(data: bytes, config: Config) -> tuple[str, str]:
    """(text, "") for acceptable content, else ("", reason)."""
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return "", REASON_BINARY
    try:
        text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as exc:
        return "", f"{REASON_NOT_UTF8} (bad byte at offset {exc.start})"
    if _PRIVATE_KEY_RE.search(text):
        return "", REASON_PRIVATE_KEY
    credential = find_credential(text)
    if credential is not None:
        return "", credential.reason
    lines = text.splitlines()
    if len(text) > config.max_line_length and max(map(len, lines)) > config.max_line_length:
        return "", REASON_MINIFIED
    for line in lines[:GENERATED_MARKER_LINES]:
        stripped = line.lstrip()
        if stripped.startswith(_COMMENT_OPENERS) and _GENERATED_RE.search(stripped):
            return "", REASON_GENERATED
    return text, ""


def read_source(repo: Path, rel_path: str, config: Config) -> SourceFile | Skip:
    """Read one file once; a Skip with a plain reason for anything that must not be indexed."""
    rel = _clean_rel(rel_path)
    if rel is None:
        return Skip(rel_path, REASON_BAD_PATH)
    if is_secret_path(rel):
        return Skip(rel, REASON_SECRET_NAME)
    if rel.rpartition("/")[2] in _LOCKFILES:
        return Skip(rel, REASON_LOCKFILE)
    root = os.path.realpath(repo)
    try:
        real, real_rel = _resolve(root, os.path.join(root, rel))
        if real_rel != rel and is_secret_path(real_rel):
            return Skip(rel, REASON_SYMLINK_SECRET)
        data, st = _read_bounded(real, config)
    except _Refused as refused:
        return Skip(rel, refused.reason)
    text, problem = _content_problem(data, config)
    if problem:
        return Skip(rel, problem)
    return SourceFile(rel, text, file_revision(data), len(data), st.st_mtime_ns)
