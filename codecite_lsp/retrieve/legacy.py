"""Old and duplicate trees (pure): the files of a repository that are a copy kept for
compatibility, found from its paths alone.

A folder named for what it holds (`legacy/`, `compat/`, `deprecated/`, `_vendor/`) is not where
the current code lives; a version folder (`v1/`) is an old copy when the same path without it
exists (`pydantic/v1/fields.py` beside `pydantic/fields.py`) or a higher version sits beside it
(`v3/` next to `v4/`). A lone `api/v1/` is the current API and stays. A Windows folder whose
file also exists in a sibling platform's folder (`src/win/tcp.c` beside `src/unix/tcp.c`) is
the same module written again for one platform: the portable one is read first. So is a Go
file's build variant: `binding_nomsgpack.go` beside `binding.go`, `fs_windows.go` beside
`fs.go` (the name's suffix a platform or a `no...` build tag, the file the build picks instead
of its sibling). ``search`` scales these files by ``legacy`` unless the query names the folder
or the tag ("the v1 validators", "on Windows").
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
# Go's file-name build constraints (GOOS, GOARCH) and the `no<tag>` / `purego` tags: `x_<tag>.go`
# is built instead of `x.go` for that target.
_GO_TAGS = frozenset(
    {
        *("aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js"),
        *("linux", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos"),
        *("386", "amd64", "arm", "arm64", "loong64", "mips", "mips64", "ppc64", "ppc64le"),
        *("riscv64", "s390x", "wasm", "appengine", "purego"),
    }
)
_GO_VARIANT = re.compile(r"(.+)_([a-z0-9]+)\.go")


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
    # What the repository names its files and folders: a `no<tag>` variant leaves one of them out
    # (`binding_nomsgpack.go`, `msgpack.go`), where `note_nothing.go` names nothing.
    modules = {part.split(".")[0] for path in known for part in path.split("/")}
    for path in known:
        parts = path.split("/")
        variant = _go_variant(parts[-1], modules)
        if variant is not None and "/".join([*parts[:-1], f"{variant[0]}.go"]) in known:
            found[path] = variant[1]
            continue
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


def _go_variant(name: str, modules: Collection[str]) -> tuple[str, str] | None:
    """(`binding`, `nomsgpack`) for `binding_nomsgpack.go`: the file it stands in for and the
    build tag; None for any other name (`tree_test.go`, `routergroup_helpers.go`)."""
    match = _GO_VARIANT.fullmatch(name)
    if match is None:
        return None
    tag = match[2]
    left_out = tag.startswith("no") and tag[2:] in modules
    return (match[1], tag) if tag in _GO_TAGS or left_out else None


def asked_for(folder: str, query: str) -> bool:
    """The query names the folder ("v1", "legacy", "vendor"): its files are what is asked."""
    wanted = folder.lower().strip("_")
    words = {word.strip("_") for word in re.findall(r"\w+", query.lower())}
    return wanted in words or (wanted in WINDOWS_FOLDERS and bool(words & WINDOWS_FOLDERS))
