"""How many files of a tree the content checks for credentials skip (false positives on code).

    python bench/secret_skips.py [folder]   # default: this Python's standard library

Prints the files scanned, the files skipped for their content (private key or token) with the
reason, and the files skipped by name.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

from codecite_lsp.core.config import Config
from codecite_lsp.ingest.scan import SourceFile, read_source, scan


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else sysconfig.get_paths()["stdlib"])
    config = Config()
    found = scan(root, config)
    by_content = {}
    for file in found.files:
        source = read_source(root, file.path, config)
        if not isinstance(source, SourceFile) and (
            "credential" in source.reason or "private key" in source.reason
        ):
            by_content[file.path] = source.reason
    by_name = [skip.path for skip in found.skipped if "secret" in skip.reason]
    print(f"{root}: {len(found.files)} files; {len(by_content)} skipped for their content; "
          f"{len(by_name)} secret by name")  # fmt: skip
    for path, reason in sorted(by_content.items()):
        print(f"  {path}: {reason}")


if __name__ == "__main__":
    main()
