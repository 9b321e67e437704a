"""Which files of a repository are indexed, and reading one of them safely.

``scan`` lists the files git would track (plus untracked ones that are not ignored), minus secrets
and vendored/build folders. ``IgnoreRules`` holds the same decision per path, cheap enough for the
watcher to call on every file-system event, so a scan and the watcher never disagree.
``read_source`` reads one file once and refuses what must not reach the index or a model:
besides secret names, a file holding a private key or a high-confidence credential
(``find_credential``: AWS, GitHub, Slack, Stripe, OpenAI, Anthropic, Google formats) is skipped
whole, never redacted, so every chunk stays equal to the file's lines.

"""

from __future__ import annotations

import errno
import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ..core.config import Config
from ..core.records import file_revision
from .ignore import IgnoreRules
from .paths import REASON_BAD_NAME, display_name, is_utf8, relative_inside, repo_relative
from .secrets import (
    REASON_PRIVATE_KEY,
    REASON_SECRET_DIR,
    REASON_SECRET_NAME,
    find_credential,
    has_private_key,
    is_secret_path,
)

log = logging.getLogger(__name__)


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
# Refusals that may not hold next time with the file unchanged (a race, a permission fixed by
# another process, a link target appearing): every other refusal follows from the file's name,
# content and the settings alone, so an unchanged stat means the same refusal.
_PASSING = (REASON_VANISHED, REASON_UNREADABLE, REASON_SYMLINK_BROKEN, REASON_SYMLINK_LOOP)


@dataclass(frozen=True)
class Skip:
    path: str
    reason: str


def lasting(reason: str) -> bool:
    """Whether a file refused for ``reason`` is refused again while its stat is unchanged."""
    return not reason.startswith(_PASSING)


@dataclass(frozen=True)
class WorkspaceFile:
    path: str  # repo-relative, "/" separators
    size: int
    mtime_ns: int
    # Changes with any write or permission change and cannot be set back: the manifest's check
    # (index/manifest.py) is thereby stricter than the size + mtime shortcut of a pass.
    ctime_ns: int = 0


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


# --- scanning ---------------------------------------------------------------------------------


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
    rel = relative_inside(root, path)
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
    real_rel = relative_inside(root, real)
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
    if too_large:
        return Skip(rel, too_large)
    return WorkspaceFile(rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def scan(
    repo: Path, config: Config, *, under: str = "", rules: IgnoreRules | None = None
) -> ScanResult:
    """Every file to index (in the folder ``under``, repo-relative; default: everywhere), sorted
    by path, and the files refused by name, path, size or link."""
    root = os.path.realpath(repo)
    if rules is None:
        rules = IgnoreRules.load(repo, index_dir=config.resolved_index_dir(repo))
    files: list[WorkspaceFile] = []
    skipped: list[Skip] = []
    pending = [under]
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
    if not is_utf8(entry.name):  # nothing under it can be keyed, stored or shown as it is
        return Skip(display_name(rel), REASON_BAD_NAME)
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
    if has_private_key(text):
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
    rel = repo_relative(rel_path)
    if rel is None:
        return Skip(display_name(rel_path), REASON_BAD_PATH)
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
