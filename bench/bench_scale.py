"""Scale benchmark: a tree of ``--files`` files assembled by ``bench/scale_tree.py`` (real stdlib
and site-packages code, renamed per round), indexed cold by the CLI, then served by a process that
holds the index as the server does (the in-memory view, the server's own indexer for saves).

Printed: files, chunks, index size on disk; the cold index's CPU, wall time and peak RSS (the
largest process: the indexer or one of its workers); then, in the serving process: RSS once the
view is loaded and after the requests, ``search`` p50/p95 (wall and CPU), ``ask`` retrieval CPU
(``Retriever.retrieve``, no model), and saved file -> searchable p95. The load average is printed
with each figure: on a shared machine read CPU seconds, not wall time.

Targets (issue 24, at >= 100k files / >= 800k chunks): cold index peak RSS <= 2 GB, server RSS
<= 1.5 GB, search p95 <= 100 ms, ask retrieval <= 300 ms CPU, saved file searchable p95 <= 300 ms.

Run: ``python bench/bench_scale.py --files 20000 [--tree DIR] [--embedding none]`` (the tree is
kept in DIR and grown, not rewritten, by a later run with more files).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from scale_tree import generate  # the sibling script (its folder is on sys.path)

QUESTIONS = [
    "How does the HTTP client retry a request after a connection error?",
    "Where are environment variables read to configure logging?",
    "How is a JSON document decoded into Python objects?",
    "What happens when a thread pool is shut down with pending work?",
    "How are command line arguments parsed into options?",
]


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def cold_index(tree: Path, index_dir: Path, embedding: str) -> dict[str, float]:
    """The CLI's cold pass in a child process: its CPU (workers included) and peak RSS."""
    shutil.rmtree(index_dir, ignore_errors=True)
    env = {**os.environ, "CODECITE_EMBEDDING": embedding}
    command = [sys.executable, "-m", "codecite_lsp", "index", "--quiet"]
    command += ["--repo", str(tree), "--index-dir", str(index_dir)]
    started = time.perf_counter()
    # stderr (a line per skipped file) kept aside: the summary line counts them, and a failure
    # shows its last lines
    errors = index_dir.parent / "index.stderr"
    with open(errors, "w") as stderr:
        child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    output = child.stdout.read() if child.stdout else ""
    if status != 0:
        said = [line for line in errors.read_text().splitlines() if not line.startswith("skipped")]
        raise SystemExit(f"codecite index failed ({status}): {output}" + "\n".join(said[-20:]))
    print(f"  {output.strip()}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,  # KiB on Linux
    }


def names_in(tree: Path, count: int) -> list[str]:
    """Function names defined in the tree (deterministic sample): the search queries."""
    found: list[str] = []
    files = sorted(tree.rglob("*.py"))
    for path in files[:: max(1, len(files) // (count * 3))]:
        match = re.search(r"^def ([A-Za-z_]\w{5,})\(", path.read_text(errors="replace"), re.M)
        if match and match.group(1) not in found:
            found.append(match.group(1))
        if len(found) == count:
            break
    return found


def serve(
    tree: Path, index_dir: Path, embedding: str, queries: int, saves: int
) -> dict[str, object]:
    """As the server: a store with the in-memory view for requests, its own indexer for
    saves. Run in a fresh process (``--serve``) so that its RSS is the server's."""
    from codecite_lsp.core.config import Config
    from codecite_lsp.index.indexer import Indexer
    from codecite_lsp.index.lance_import import import_lancedb
    from codecite_lsp.retrieve.retriever import open_retriever

    import_lancedb()
    config = Config(index_dir=str(index_dir), embedding=embedding)
    figures: dict[str, object] = {"rss_start_mb": rss_mb()}  # the modules imported, no index
    started = time.process_time()
    retriever = open_retriever(tree, config, in_memory=True)
    retriever.store.wait_for_view()
    retriever.search("warm", limit=10)  # the vectors' matrix is read on the first search
    figures["view_load_cpu"] = time.process_time() - started
    figures["rss_loaded_mb"] = rss_mb()
    figures["chunks"] = retriever.store.chunk_count()
    words = names_in(tree, queries)
    walls, cpus = [], []
    for word in words:
        c0, t0 = time.process_time(), time.perf_counter()
        retriever.results(word, limit=10)  # what a user is shown: checked against the files
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    figures["search_load"] = load()
    figures["search_wall_p50"], figures["search_wall_p95"] = (
        statistics.median(walls),
        percentile(walls, 0.95),
    )
    figures["search_cpu_p95"] = percentile(cpus, 0.95)
    figures["rss_searched_mb"] = rss_mb()
    asks = []
    for question in QUESTIONS:
        c0 = time.process_time()
        retriever.retrieve(question)
        asks.append(time.process_time() - c0)
    figures["ask_cpu_p50"], figures["ask_cpu_max"] = statistics.median(asks), max(asks)
    figures["rss_asked_mb"] = rss_mb()
    indexer = Indexer(tree, config)
    files = sorted(p for p in indexer.store.files() if p.count("/") == 1)  # round0/x.py
    latencies, update_cpus = [], []
    for i in range(-1, saves):  # -1: the server's indexer has run its pass before any save
        rel = files[(i * 7919 + 1) % len(files)]
        word = f"scaleword{i + 1}x{time.time_ns()}"
        with open(tree / rel, "a", encoding="utf-8") as handle:
            handle.write(f"\n# {word}\n")
        c0, t0 = time.process_time(), time.perf_counter()
        indexer.update_paths([rel])
        found = retriever.search(word, limit=1)
        if i >= 0:
            latencies.append(time.perf_counter() - t0)
            update_cpus.append(time.process_time() - c0)
        if not found or found[0].chunk.path != rel:
            raise SystemExit(f"saved word not found in {rel}: {found}")
    figures["save_load"] = load()
    if latencies:
        figures["save_p50"], figures["save_p95"] = (
            statistics.median(latencies),
            percentile(latencies, 0.95),
        )
        figures["save_cpu_p95"] = percentile(update_cpus, 0.95)
    figures["rss_after_mb"] = rss_mb()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--tree", type=Path, default=Path("/tmp/codecite-scale/tree"))
    parser.add_argument("--embedding", default="default", help="'none': keyword index only")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--saves", type=int, default=10)
    parser.add_argument(
        "--reuse", action="store_true", help="serve the index of the last run (no cold index)"
    )
    parser.add_argument("--serve", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        print(json.dumps(serve(*args.serve, args.embedding, args.queries, args.saves)))
        return 0

    os.environ.setdefault("RUST_LOG", "error")
    t0 = time.perf_counter()
    files, size = generate(args.tree, args.files)
    print(f"tree: {files} files, {size / 1e6:.0f} MB ({time.perf_counter() - t0:.0f} s)")
    index_dir = args.tree.parent / "index"
    before = load()
    cold = None if args.reuse else cold_index(args.tree, index_dir, args.embedding)
    command = [sys.executable, __file__, "--serve", str(args.tree), str(index_dir)]
    command += ["--embedding", args.embedding]
    command += ["--queries", str(args.queries), "--saves", str(args.saves)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-4000:])
    served = json.loads(done.stdout.strip().splitlines()[-1])
    chunks = int(served["chunks"])
    ms = 1000.0
    print(f"\n## {files} files, {chunks} chunks, index {folder_mb(index_dir):.0f} MB on disk")
    print(f"embedding: {args.embedding}\n| figure | value | target | load |\n|---|---|---|---|")
    if cold is not None:
        print(
            f"| cold index CPU / wall | {cold['cpu']:.0f} s / {cold['wall']:.0f} s | |"
            f" {before}-{load()} |"
        )
        peak = cold["peak_rss_mb"]
        print(f"| cold index peak RSS (largest process) | {peak:.0f} MB | <= 2048 MB | |")
    print(
        f"| server RSS: view loaded / after requests | {served['rss_loaded_mb']:.0f} /"
        f" {served['rss_after_mb']:.0f} MB | <= 1536 MB | |"
    )
    print(
        f"| ... after the searches / the questions | {served['rss_searched_mb']:.0f} /"
        f" {served['rss_asked_mb']:.0f} MB | | |"
    )
    per_chunk = (float(served["rss_after_mb"]) - float(served["rss_start_mb"])) * 1024 / chunks
    print(f"| ... per chunk (after - before opening) | {per_chunk:.1f} KB | | |")
    print(f"| view load CPU | {served['view_load_cpu']:.1f} s | | |")
    print(
        f"| search p50 / p95 wall, p95 CPU | {served['search_wall_p50'] * ms:.0f} /"
        f" {served['search_wall_p95'] * ms:.0f} / {served['search_cpu_p95'] * ms:.0f} ms |"
        f" p95 <= 100 ms | {served['search_load']} |"
    )
    print(
        f"| ask retrieval CPU p50 / max | {served['ask_cpu_p50'] * ms:.0f} /"
        f" {served['ask_cpu_max'] * ms:.0f} ms | <= 300 ms | |"
    )
    if "save_p95" in served:
        print(
            f"| saved file searchable p50 / p95 (CPU p95) | {served['save_p50'] * ms:.0f} /"
            f" {served['save_p95'] * ms:.0f} ms ({served['save_cpu_p95'] * ms:.0f} ms) |"
            f" p95 <= 300 ms | {served['save_load']} |"
        )
    print(
        f"\ncommand: python bench/bench_scale.py --files {args.files} --embedding {args.embedding}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
