"""A digest of everything the chunker gives for the running interpreter's standard library
(site-packages aside): every chunk of every file (all fields: lines, bytes, symbol, kind, text,
hashes, defines, uses, findings) and its full-text field, one hash per file and budget. Work that
makes chunking cheaper must leave it unchanged: write one digest with main's code on
PYTHONPATH, one with yours, and compare.

Run: ``python bench/chunk_digest.py OUT.json [--budget 1800 --budget 300] [--compare OTHER.json]``
(``--compare``: the files whose chunks differ from OTHER.json's, if any; exit status 1 then).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import sysconfig
import time
from pathlib import Path

from codecite_lsp.core.config import Config
from codecite_lsp.ingest.scan import SourceFile, read_source, scan
from codecite_lsp.ingest.workers import chunked


def digests(budgets: list[int]) -> dict[str, str]:
    """``"budget:path"`` -> sha256 of the file's chunks and full-text fields at that budget."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    config = Config(embedding="none")
    paths = [
        f.path
        for f in scan(stdlib, config).files
        if not f.path.startswith("site-packages/") and "__pycache__" not in f.path
    ]
    sources = [read_source(stdlib, p, config) for p in paths]
    texts = [s for s in sources if isinstance(s, SourceFile)]
    found: dict[str, str] = {}
    started = time.process_time()
    for budget in budgets:
        for source in texts:
            ready = chunked(source.path, source, budget)
            digest = hashlib.sha256(repr(ready.error).encode())
            for chunk, search_text in zip(
                ready.chunks or (), ready.search_texts or (), strict=True
            ):
                digest.update(repr(chunk).encode("utf-8", "surrogatepass") + b"\0")
                digest.update(search_text.encode("utf-8", "surrogatepass") + b"\1")
            found[f"{budget}:{source.path}"] = digest.hexdigest()
    spent = time.process_time() - started
    print(f"{len(texts)} files x {len(budgets)} budgets chunked in {spent:.1f} s CPU")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--budget", type=int, action="append", help="default: 1800 and 300")
    parser.add_argument("--compare", type=Path, help="a digest written before")
    args = parser.parse_args()
    found = digests(args.budget or [1800, 300])
    args.out.write_text(json.dumps(found, indent=0, sort_keys=True))
    if args.compare is None:
        return
    other = json.loads(args.compare.read_text())
    differ = sorted(key for key in found.keys() | other.keys() if found.get(key) != other.get(key))
    print(f"{len(differ)} of {len(found)} file digests differ from {args.compare}")
    for key in differ[:20]:
        print(f"  {key}")
    if differ:
        sys.exit(1)


if __name__ == "__main__":
    main()
