"""How often the planted-instruction detector flags real code (false positives).

    python bench/scan_injection.py [DIR ...]   # default: the CPython stdlib, then site-packages

First the planted corpus (tests/data/injection): planted variants found, look-alikes flagged.
Then chunks each text file as the indexer does (ingest/chunking.py, which scans each chunk and
stores its findings) and counts the chunks and files with a finding, by kind, and per 10k
chunks; prints every flagged chunk's first finding so each can be judged. The detector's time is
measured on its own, uncached (what indexing pays per chunk).
"""

from __future__ import annotations

import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path

from codecite_lsp.ingest.chunking import chunk_text
from codecite_lsp.ingest.injection import findings

SUFFIXES = {".py", ".pyi", ".md", ".rst", ".txt", ".js", ".ts", ".go", ".toml", ".cfg", ".json"}
MAX_BYTES = 1_000_000
CORPUS = Path(__file__).parents[1] / "tests" / "data" / "injection"


def blocks(name: str) -> list[str]:
    """A corpus file's entries: the blocks after its header, separated by lines ``%%``."""
    text = (CORPUS / name).read_text(encoding="utf-8")
    return [block.strip("\n") for block in text.split("\n%%\n")[1:] if block.strip()]


def corpus() -> None:
    planted, benign = blocks("planted.txt"), blocks("benign.txt")
    missed = [text for text in planted if not findings(text)]
    flagged = [text for text in benign if findings(text)]
    found = len(planted) - len(missed)
    print(f"planted found: {found} of {len(planted)} ({100.0 * found / len(planted):.1f}%)")
    for text in missed:
        print(f"  missed: {text!r}")
    print(f"look-alikes flagged: {len(flagged)} of {len(benign)}")


def scan(roots: list[Path], skip: Path | None = None) -> None:
    files = chunks = 0
    flagged_files: set[Path] = set()
    flagged_chunks = 0
    by_kind: Counter[str] = Counter()
    seconds = 0.0
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            if skip is not None and path.is_relative_to(skip):
                continue
            if path.stat().st_size > MAX_BYTES:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            files += 1
            for chunk in chunk_text(str(path), text, revision=""):
                chunks += 1
                started = time.perf_counter()
                findings.__wrapped__(chunk.text)  # the scan itself, not the cache's look-up
                seconds += time.perf_counter() - started
                found = chunk.untrusted  # what the index stores, at file lines
                if not found:
                    continue
                flagged_chunks += 1
                flagged_files.add(path)
                by_kind.update({finding.kind for finding in found})
                first = found[0]
                print(f"  {path}:{first.line}: {first.kind}: {first.excerpt!r}")
    print(f"roots: {', '.join(map(str, roots))}")
    print(f"files scanned: {files}, chunks: {chunks}")
    print(f"flagged chunks: {flagged_chunks} ({100.0 * flagged_chunks / max(chunks, 1):.3f}%)")
    print(f"per 10k chunks: {1e4 * flagged_chunks / max(chunks, 1):.2f}")
    print(f"flagged files: {len(flagged_files)}")
    print(f"by kind (chunks): {dict(sorted(by_kind.items()))}")
    print(f"detector time: {seconds:.2f} s ({1e6 * seconds / max(chunks, 1):.0f} us per chunk)")


if __name__ == "__main__":
    corpus()
    given = [Path(arg) for arg in sys.argv[1:]]
    if given:
        scan(given)
    else:  # the stdlib holds site-packages: each counted on its own
        packages = Path(sysconfig.get_paths()["purelib"])
        scan([Path(sysconfig.get_paths()["stdlib"])], skip=packages)
        scan([packages])
