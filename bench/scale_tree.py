"""A large repository assembled from real code: the running interpreter's standard library and
site-packages (``.py`` files only), copied round after round under renamed folders until
``--files`` files are written.

Copies past the first rename every identifier that is not a keyword, a builtin or ``self``
(``name`` -> ``name_r3``, deterministic), so each round's chunks have their own content hashes
and vectors, as distinct code would, while the syntax (and so the chunking) stays the real one.
About 10 chunks a file: 100,000 files give about a million chunks.

Run: ``python bench/scale_tree.py TARGET --files 100000`` (about 1 GB per 20,000 files).
"""

from __future__ import annotations

import argparse
import builtins
import keyword
import re
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

from codecite_lsp.ingest.ignore import VENDORED_DIRS

_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_KEPT = frozenset({*keyword.kwlist, *keyword.softkwlist, *dir(builtins), "self", "cls"})
_MAX_BYTES = 400_000  # larger files are skipped, as the indexer's size limit would


def sources() -> list[Path]:
    """Every ``.py`` file of the stdlib (site-packages included), in a stable order."""
    root = Path(sysconfig.get_paths()["stdlib"])
    found = []
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts or "test" in path.parts or "tests" in path.parts:
            continue  # test suites hold generated and deliberately broken files
        try:
            if 0 < path.stat().st_size <= _MAX_BYTES and path.is_file():
                found.append(path)
        except OSError:
            continue
    return found


def renamed(text: str, round_: int) -> str:
    if round_ == 0:
        return text
    suffix = f"_r{round_}"
    return _IDENTIFIER.sub(
        lambda m: m.group(0) if m.group(0) in _KEPT else m.group(0) + suffix, text
    )


def planned(files: int, pool: list[Path], root: Path) -> Iterator[tuple[Path, str, int]]:
    """(source, relative target, round) for ``files`` files."""
    for n in range(files):
        round_, index = divmod(n, len(pool))
        source = pool[index]
        parts = (_unvendored(part) for part in source.relative_to(root).parts)
        yield source, "/".join((f"round{round_}", *parts)), round_


def _unvendored(part: str) -> str:
    """A folder the indexer skips as third-party (site-packages, build ...) renamed: here it
    is the code under test."""
    return f"{part.strip('.')}_src" if part in VENDORED_DIRS else part


def generate(target: Path, files: int) -> tuple[int, int]:
    """Write the tree (files already there are kept: a larger run extends a smaller one's);
    returns (files, bytes)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    pool = sources()
    written = size = 0
    for source, rel, round_ in planned(files, pool, root):
        path = target / rel
        if not path.exists():
            text = source.read_text(encoding="utf-8", errors="replace")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(renamed(text, round_), encoding="utf-8")
        written += 1
        size += path.stat().st_size
    return written, size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path)
    parser.add_argument("--files", type=int, default=100_000)
    args = parser.parse_args()
    files, size = generate(args.target, args.files)
    print(f"{files} files, {size / 1e6:.0f} MB in {args.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
