"""Old and duplicate trees (pure): the files of a repository that are a copy kept for
compatibility, found from its paths alone.

A folder named for what it holds (`legacy/`, `compat/`, `deprecated/`, `_vendor/`) is not where
the current code lives; a version folder (`v1/`) is an old copy when the same path without it
exists (`pydantic/v1/fields.py` beside `pydantic/fields.py`) or a higher version sits beside it
(`v3/` next to `v4/`). A lone `api/v1/` is the current API and stays. A Windows folder whose
file also exists in a sibling platform's folder (`src/win/tcp.c` beside `src/unix/tcp.c`) is
the same module written again for one platform: the portable one is read first. ``search``
scales these files by ``legacy`` unless the query names the folder ("the v1 validators", "on
Windows").
"""

from __future__ import annotations

import re
from collections.abc import Collection

# Folder names that say "a copy kept for compatibility", not the current code.
LEGACY_FOLDERS = frozenset(
    {"legacy", "compat", "deprecated", "obsolete", "_vendor", "vendor", "vendored"}
)
_VERSION = re.compile(r"v(\d+)")
# Folder names of one platform's copy of a module tree.
WINDOWS_FOLDERS = frozenset({"win", "windows", "win32", "win64", "nt"})


def legacy_files(paths: Collection[str]) -> dict[str, str]:
    """Each path of an old or duplicate tree -> the folder that makes it one."""
    known = set(paths)
    versions: dict[str, set[int]] = {}  # parent folder -> the version folders inside it
    for path in known:
        parts = path.split("/")[:-1]
        for i, part in enumerate(parts):
            match = _VERSION.fullmatch(part)
            if match:
                versions.setdefault("/".join(parts[:i]), set()).add(int(match[1]))
    found: dict[str, str] = {}
    names: dict[str, set[str]] = {}  # parent folder -> the file names of its subfolders
    for path in known:
        parts = path.split("/")
        for i in range(len(parts) - 1):
            if parts[i].lower() not in WINDOWS_FOLDERS:
                names.setdefault("/".join(parts[:i]), set()).add("/".join(parts[i + 1 :]))
    for path in known:
        parts = path.split("/")
        for i, part in enumerate(parts[:-1]):
            if part.lower() in LEGACY_FOLDERS:
                found[path] = part
                break
            if part.lower() in WINDOWS_FOLDERS and "/".join(parts[i + 1 :]) in names.get(
                "/".join(parts[:i]), ()
            ):
                found[path] = part
                break
            match = _VERSION.fullmatch(part)
            if match is None:
                continue
            without = "/".join(parts[:i] + parts[i + 1 :])
            newer = max(versions.get("/".join(parts[:i]), {0})) > int(match[1])
            if without in known or newer:
                found[path] = part
                break
    return found


def asked_for(folder: str, query: str) -> bool:
    """The query names the folder ("v1", "legacy", "vendor"): its files are what is asked."""
    wanted = folder.lower().strip("_")
    words = {word.strip("_") for word in re.findall(r"\w+", query.lower())}
    return wanted in words or (wanted in WINDOWS_FOLDERS and bool(words & WINDOWS_FOLDERS))
