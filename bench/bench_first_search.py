"""Time to the first search result on a fresh repository of 200 files (issue 24: <= 2 s).

Each round makes a new git repository of 200 real files (the running interpreter's standard
library, a different slice each round) with no index, then runs what a user runs, as child
processes timed from their start to their exit:

- ``codecite search QUERY --json`` alone on the repository never indexed: it builds the keyword
  index, prints the results and closes its output, then fills the vectors before it exits.
  Timed to the end of its output (what the user waits for: the first search result) and to
  its exit (the index complete);
- ``codecite index`` then ``codecite search QUERY --json`` on another copy: both commands, one
  after the other, and each alone;
- ``python -c "import lancedb"`` (the floor every command that opens an index pays);
- with ``--server``, a language server started on a third copy (what an editor opening the
  repository gets): ``codecite/search`` sent every 100 ms from the spawn until it returns a
  result, timed from the spawn.

Wall times depend on what else the machine runs: the load average is printed with each round,
and CPU time (user + sys of the child) beside the wall time.

Run: ``python bench/bench_first_search.py [--rounds 5] [--files 200] [--server]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

QUERY = "parse an address header"


def stdlib_files() -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = set(path.relative_to(root).parts)
        if parts & {"site-packages", "test", "tests", "__pycache__", "idlelib", "lib2to3"}:
            continue
        if 0 < path.stat().st_size <= 200_000:
            found.append(path)
    return found


def make_repo(target: Path, files: list[Path]) -> None:
    root = Path(sysconfig.get_paths()["stdlib"])
    for path in files:
        destination = target / path.relative_to(root)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
    git = ["git", "-C", str(target)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x",
        "GIT_COMMITTER_NAME": "b",
    }
    env["GIT_COMMITTER_EMAIL"] = "b@x"
    subprocess.run([*git, "commit", "-qm", "fresh"], check=True, env=env)


def first_search(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall to the end of the output, wall to the exit, stdout)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None and process.stderr is not None
    out = process.stdout.read()
    results = time.perf_counter() - started
    err = process.stderr.read()
    if process.wait() != 0:
        raise SystemExit(f"{' '.join(command)} failed: {err[-2000:]}")
    return results, time.perf_counter() - started, out


async def server_first_results(repo: Path) -> float:
    """Seconds from a language server's spawn to the first ``codecite/search`` with results."""
    from bench_server import start, stop  # main() put bench/ and tests/ on the path
    from lsp_helpers import request

    spawned = time.perf_counter()
    client, _ = await start(repo, repo / ".codecite")
    try:
        while True:
            reply = await request(client, "codecite/search", {"query": QUERY, "limit": 5})
            if reply["results"]:
                return time.perf_counter() - spawned
            await asyncio.sleep(0.1)
    finally:
        await stop(client)


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall, CPU of the child, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--server", action="store_true", help="also a language server's")
    args = parser.parse_args()
    if args.server:  # the language-server client helpers of bench/ and tests/
        sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parent.parent / "tests")]
    pool = stdlib_files()
    step = max(1, (len(pool) - args.files) // max(1, args.rounds))
    codecite = [sys.executable, "-m", "codecite_lsp"]
    firsts: list[float] = []
    totals: list[float] = []
    servers: list[float] = []
    print(
        "| round | load | search alone: results / exit | index + search wall (CPU) | index"
        " | search | import lancedb | language server: first results |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for round_ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="codecite-first-") as scratch:
            files = pool[round_ * step : round_ * step + args.files]
            alone, repo = Path(scratch) / "alone", Path(scratch) / "repo"
            make_repo(alone, files)
            make_repo(repo, files)
            env = {**os.environ, "XDG_CACHE_HOME": str(Path(scratch) / "cache")}
            env["CODECITE_EMBEDDING"] = "default"
            load = f"{os.getloadavg()[0]:.1f}"
            floor, _, _ = timed([sys.executable, "-c", "import lancedb"], env)
            first = first_search([*codecite, "search", QUERY, "--json", "--repo", str(alone)], env)
            index = timed([*codecite, "index", "--quiet", "--repo", str(repo)], env)
            search = timed([*codecite, "search", QUERY, "--json", "--repo", str(repo)], env)
            for out in (first[2], search[2]):
                if not json.loads(out)["results"]:
                    raise SystemExit(f"no result for {QUERY!r} in round {round_}")
            total = index[0] + search[0]
            firsts.append(first[0])
            totals.append(total)
            server = "-"
            if args.server:
                served = Path(scratch) / "served"
                make_repo(served, files)
                servers.append(asyncio.run(server_first_results(served)))
                server = f"{servers[-1]:.2f} s"
            print(
                f"| {round_ + 1} | {load} | {first[0]:.2f} s / {first[1]:.2f} s |"
                f" {total:.2f} s ({index[1] + search[1]:.2f} s) |"
                f" {index[0]:.2f} s | {search[0]:.2f} s | {floor:.2f} s | {server} |"
            )
    print(
        f"\nmedian first search result, `codecite search` alone: {statistics.median(firsts):.2f} s"
        " (target <= 2 s)"
    )
    print(f"median index + search: {statistics.median(totals):.2f} s")
    if servers:
        print(f"median language server, spawn to first results: {statistics.median(servers):.2f} s")
    print(
        f"command: python bench/bench_first_search.py --rounds {args.rounds} --files {args.files}"
        + (" --server" if args.server else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
