"""The base's mask (index/overlay.py) as each new process builds it: every base file hashed, or
only those whose stat changed since a process last remembered them.

A copy of the running interpreter's standard library (mtimes set a minute back, as a checkout's
settled files are) is the base; three overlays are built from it in turn: without memory, the
first with it (hashes all, writes the record), the next process (reads the record). Prints each
one's wall and CPU time, and the scan alone, which every one of them includes.

Run: ``python bench/bench_overlay.py``.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
import tempfile
import time
from pathlib import Path

from codecite_lsp.core.config import load_config
from codecite_lsp.core.records import file_revision
from codecite_lsp.index.overlay import Overlay
from codecite_lsp.ingest.scan import scan


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch) / "stdlib"
        ignored = shutil.ignore_patterns("site-packages", "__pycache__")
        shutil.copytree(sysconfig.get_paths()["stdlib"], repo, ignore=ignored)
        settled = time.time() - 60
        for path in repo.rglob("*"):
            if path.is_file():
                os.utime(path, (settled, settled))
        config = load_config(repo)
        files = scan(repo, config).files
        base = {f.path: file_revision((repo / f.path).read_bytes()) for f in files}
        remembered = Path(scratch) / "base-unchanged.json"
        print(f"{len(files)} base files, {sum(f.size for f in files) / 1e6:.1f} MB")
        runs = [("without memory", None), ("first process", remembered)]
        for label, record in [*runs, ("next process", remembered)]:
            overlay = Overlay(repo, base, record)
            wall, cpu = time.perf_counter(), time.process_time()
            overlay.refresh(scan(repo, config).files)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(f"{label}: {wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU (scan included)")
        wall = time.perf_counter()
        scan(repo, config)
        print(f"the scan alone: {(time.perf_counter() - wall) * 1000:.0f} ms")
        print(f"(load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
