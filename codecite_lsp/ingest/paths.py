"""Repository-relative paths: the one normal form every stage keys files by.

A path in the index is relative to the repository root, "/"-separated, normalised (no ".",
"..", or doubled separators), and valid UTF-8: the operating system may hand out file names that
are not (``open(b'caf\\xe9.py', 'w')``), which Python carries as lone surrogates that LanceDB, JSON
and every editor refuse. Nor is a name holding a control character: a newline in a file name
would forge lines of every line-oriented output (a search result, a citation, a skip). Such a
name is not a repository path; ``display_name`` shows it escaped in a skip reason.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable

REASON_BAD_NAME = "file name is not valid UTF-8; never indexed"
REASON_CONTROL_NAME = "file name holds a control character (a newline, an escape); never indexed"
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_ESCAPED = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))}


def is_utf8(name: str) -> bool:
    """False for a name holding the lone surrogates Python uses for undecodable bytes."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def name_problem(name: str) -> str | None:
    """Why ``name`` (a file name or path) cannot be a repository path, or None."""
    if not is_utf8(name):
        return REASON_BAD_NAME
    return REASON_CONTROL_NAME if _CONTROL.search(name) else None


def display_name(name: str) -> str:
    """``name`` printable and encodable on one line: undecodable bytes and control characters
    as ``\\xe9`` escapes."""
    shown = name if is_utf8(name) else os.fsencode(name).decode("utf-8", "backslashreplace")
    return shown.translate(_ESCAPED)


def repo_relative(path: str, roots: Iterable[str] = ()) -> str | None:
    """``path`` as a repository path, or None if it is not one.

    A relative ``path`` is taken as relative to the root; an absolute one must lie under one of
    ``roots`` (absolute folder paths: a repository may be named through a symlink as well as
    its real path). None for the root itself, anything outside, a NUL, or a non-UTF-8 name.
    """
    if not path or name_problem(path) is not None:
        return None
    if os.path.isabs(path):
        normal = os.path.normpath(path)
        for root in roots:
            rel = relative_inside(os.path.normpath(root), normal)
            if rel:
                return rel
        return None
    rel = posixpath.normpath(path.replace(os.sep, "/"))
    return None if rel in (".", "..") or rel.startswith("../") or rel.startswith("/") else rel


def relative_inside(root: str, real: str) -> str | None:
    """``real`` relative to ``root`` with "/" separators ("" for the root itself), or None when
    it lies outside; both normalised absolute paths (the scan's hot path: a prefix test only)."""
    if real == root:
        return ""
    prefix = root if root.endswith(os.sep) else root + os.sep
    if not real.startswith(prefix):
        return None
    return real[len(prefix) :].replace(os.sep, "/")
