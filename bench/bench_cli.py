"""The command line where users wait, process start to exit, on a copy of the running
interpreter's standard library (a git repository, indexed once first):

- ``codecite index`` on the unchanged checkout: the manifest check (a stat walk, no lancedb)
  against the normal pass forced in the same run (``CODECITE_INDEX_BYPASS_MANIFEST=1``, which
  only this benchmark sets), taken in turns;
- ``codecite search QUERY --json`` against its floors: starting Python, and starting Python and
  importing lancedb (which a search needs) as codecite does (``index/lance_import.py``), with a
  plain ``import lancedb`` beside it;
- where the search's imports go (``python -X importtime``), by top-level package.

Wall times depend on what else the machine runs: CPU time (user + sys of the child) is printed
beside them. Not a timed test: run it by hand.

Run: ``python bench/bench_cli.py [--rounds 7] [--keep DIR]`` (``--keep`` reuses or keeps the
copy and its index between runs).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench_index import copy_stdlib

ROOT = Path(__file__).resolve().parent.parent
QUERY = "parse a url into its components"
IMPORT_AS_CODECITE = "from codecite_lsp.index.lance_import import import_lancedb; import_lancedb()"
BYPASS = {"CODECITE_INDEX_BYPASS_MANIFEST": "1"}


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in BYPASS}
    return {**env, "PYTHONPATH": str(ROOT), **(extra or {})}


def run(argv: list[str], extra: dict[str, str] | None = None) -> tuple[float, float, str, str]:
    """Wall seconds, CPU seconds of the child, stdout, stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=environment(extra))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {done.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, done.stdout, done.stderr


def codecite(repo: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "codecite_lsp", *args, "--repo", str(repo)]


def row(name: str, samples: list[tuple[float, float]]) -> str:
    walls = [wall for wall, _ in samples]
    cpus = [cpu for _, cpu in samples]
    return (
        f"| {name} | {statistics.median(walls):.2f} s | {min(walls):.2f} s "
        f"| {statistics.median(cpus):.2f} s |"
    )


def import_breakdown(repo: Path) -> list[tuple[str, float]]:
    """Seconds of import per top-level package (the sum of each module's own time)."""
    *_, stderr = run(
        [sys.executable, "-X", "importtime", *codecite(repo, "search", QUERY, "--json")[1:]]
    )
    spent: dict[str, float] = defaultdict(float)
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _, name = line.removeprefix("import time:").split("|")
        spent[name.strip().split(".")[0]] += int(own) / 1e6
    return sorted(spent.items(), key=lambda item: -item[1])


def prepare(work: Path) -> Path:
    repo = work / "stdlib"
    if not repo.exists():
        copy_stdlib(repo)
        if shutil.which("git"):
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
    wall, _, out, _ = run(codecite(repo, "index", "--quiet"))
    print(f"index (first run in this benchmark): {wall:.1f} s: {out.strip()}")
    return repo


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="a folder for the stdlib copy and its index")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="codecite-cli-"))
    try:
        repo = prepare(work)
        fast, normal, search, python, lancedb, deferred = [], [], [], [], [], []
        for _ in range(args.rounds):
            wall, cpu, out, _ = run(codecite(repo, "index", "--quiet"))
            assert "unchanged since the last pass" in out, out
            fast.append((wall, cpu))
            wall, cpu, out, _ = run(codecite(repo, "index", "--quiet"), BYPASS)
            assert "unchanged" not in out and "(0 written, 0 deleted" in out, out
            normal.append((wall, cpu))
            wall, cpu, _, _ = run(codecite(repo, "search", QUERY, "--json"))
            search.append((wall, cpu))
            python.append(run([sys.executable, "-c", "pass"])[:2])
            lancedb.append(run([sys.executable, "-c", "import lancedb"])[:2])
            deferred.append(run([sys.executable, "-c", IMPORT_AS_CODECITE])[:2])
        print(f"\n{repo}: {args.rounds} rounds, load average {os.getloadavg()[0]:.1f}")
        print("| command | median wall | min wall | median CPU |\n|---|---|---|---|")
        print(row("`codecite index`, unchanged checkout (manifest)", fast))
        print(row("`codecite index`, unchanged checkout (normal pass forced)", normal))
        print(row("`codecite search QUERY --json`", search))
        print(row("floor: `python -c pass`", python))
        print(row('`python -c "import lancedb"`', lancedb))
        print(row("floor: lancedb imported as codecite does (`import_lancedb()`)", deferred))
        print("\nimports of one `codecite search` (-X importtime, own time per package):")
        breakdown = import_breakdown(repo)
        total = sum(seconds for _, seconds in breakdown)
        for name, seconds in breakdown[:12]:
            print(f"  {name:<32} {seconds:6.2f} s")
        print(f"  {'all':<32} {total:6.2f} s")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
