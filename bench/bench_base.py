"""A shared base on a local S3-protocol server (moto's, 127.0.0.1): what a teammate waits for.

The tree (the CPython stdlib without site-packages by default; ``--tree DIR`` another, ``--small``
its ``email``, ``json`` and ``http`` packages only) is committed to a fresh git repository, its
base published by ``codecite index --publish`` (as CI would), and cloned; ``--overlay N`` files
of the clone get a new function each (the overlay). Printed:

- publish: the cold index and the upload (CI's cost, once per commit), the bytes it put on the
  store, and a second publish of the unchanged index (the upload alone, and the pass's check);
- first answer: a fresh process with only the ``base`` setting: choosing the base, copying it
  locally, indexing the overlay, opening the index and answering one search (imports included;
  target <= 5 s on the stdlib); ``--repeat`` runs (the clone's index and copy removed before
  each), their median, and its steps: the main thread's and the copy thread's (its lines);
- query p50/p95 of the same searches, interleaved, on base + overlay and on a local-only index
  of the same tree, both from the server's in-memory view (target: base + overlay <= 2x).

Run: ``python bench/bench_base.py [--small] [--tree DIR] [--overlay 100] [--queries 60]
[--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

BUCKET = "codecite-bench"
FIRST_ANSWER = """
import sys, time
started = time.monotonic()
import json, logging, resource
from pathlib import Path
from codecite_lsp.core.config import load_config
from codecite_lsp.index import base
from codecite_lsp.index.indexer import Indexer
from codecite_lsp.index.lance_import import import_lancedb
from codecite_lsp.retrieve.retriever import open_retriever
import_lancedb()
def mark(what):  # wall time since start; CPU of this process's threads and ended workers
    used = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in used)
    events.append((what, time.monotonic() - started, cpu))
events = []
mark("imports")
class Marks(logging.Handler):  # the copy thread's and the mask's own lines, when said
    def emit(self, record):
        mark(record.getMessage())
logging.getLogger("codecite_lsp.index.base").addHandler(Marks())
logging.getLogger("codecite_lsp.index.base").setLevel(logging.INFO)
def progress(done, total, what):
    if what in ("building the search index", "embedding chunks") and events[-1][0] != what:
        mark(what)
repo = Path(sys.argv[1])
config = load_config(repo)
found = base.opened(repo, config, config.resolved_index_dir(repo))
mark("base chosen, mask made")
report = Indexer(repo, config).run(progress)
mark("overlay pass ended")
retriever = open_retriever(repo, config)
mark("index opened")
results = retriever.search(sys.argv[2], limit=10)
mark("searched")
print(json.dumps({"events": events, "files": report.files, "results": len(results)}))
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _tree(args: argparse.Namespace, target: Path) -> None:
    source = Path(args.tree or sysconfig.get_paths()["stdlib"])
    ignore = shutil.ignore_patterns("site-packages", "__pycache__", "*.pyc")
    if args.small:
        for name in ("email", "json", "http"):
            shutil.copytree(source / name, target / name, ignore=ignore)
    else:
        shutil.copytree(source, target, ignore=ignore, symlinks=True)
    _git(target, "init", "-q")
    _git(target, "add", "-A")
    _git(target, "-c", "user.name=ci", "-c", "user.email=ci@example.invalid", "commit", "-qm", "x")


def _overlay(clone: Path, count: int) -> list[str]:
    """Append a function with a word of its own to ``count`` Python files; their words."""
    files = sorted(p for p in clone.rglob("*.py") if ".git" not in p.parts)
    chosen = random.Random(0).sample(files, min(count, len(files)))
    words = []
    for number, path in enumerate(chosen):
        word = f"overlaidword{number}"
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\ndef {word}_helper():\n    return '{word} edited locally'\n")
        words.append(word)
    return words


def _queries(repo: Path, count: int) -> list[str]:
    """Names defined in the tree (deterministic): what people search for."""
    from codecite_lsp.core.config import Config
    from codecite_lsp.index.store import Store

    store = Store.open(Config().resolved_index_dir(repo))
    names = sorted(n for n in store.references().defined_names() if len(n) > 4)
    return random.Random(1).sample(names, min(count, len(names)))


def _stored(store_env: dict[str, str]) -> int:
    """Bytes in the bucket (what publishing uploaded)."""
    import boto3

    pages = boto3.client("s3", endpoint_url=store_env["AWS_ENDPOINT"]).get_paginator(
        "list_objects_v2"
    )
    listed = pages.paginate(Bucket=BUCKET)
    return sum(item["Size"] for page in listed for item in page.get("Contents", []))


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", default=None)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--overlay", type=int, default=100)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--embedding", default="default")
    parser.add_argument("--repeat", type=int, default=3, help="first answers measured")
    args = parser.parse_args()

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs each request

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    store_env = {
        "AWS_ENDPOINT": f"http://127.0.0.1:{port}",
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
    }
    os.environ.update(store_env)
    os.environ["CODECITE_EMBEDDING"] = args.embedding
    import boto3

    boto3.client("s3", endpoint_url=store_env["AWS_ENDPOINT"]).create_bucket(Bucket=BUCKET)
    uri = f"s3://{BUCKET}/bench"
    work = Path(tempfile.mkdtemp(prefix="bench-base-"))
    try:
        ci, mine = work / "ci", work / "mine"
        _tree(args, ci)
        started = time.monotonic()
        published = subprocess.run(
            [sys.executable, "-m", "codecite_lsp", "index", "--quiet", "--repo", str(ci),
             "--publish", uri],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        print(f"publish (cold index + upload): {time.monotonic() - started:.1f} s")
        print("  " + published.stdout.strip().replace("\n", "\n  "))
        print(f"  on the store: {_stored(store_env) / 1e6:.1f} MB")
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "codecite_lsp", "index", "--quiet", "--repo", str(ci),
             "--publish", uri],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        print(f"publish again (index unchanged: the upload): {time.monotonic() - started:.1f} s")
        subprocess.run(["git", "clone", "-q", str(ci), str(mine)], check=True)
        words = _overlay(mine, args.overlay)

        env = {**os.environ, "CODECITE_BASE": uri}
        runs = []
        for _ in range(args.repeat):  # each a teammate's first open: no index, no copy yet
            shutil.rmtree(mine / ".codecite", ignore_errors=True)
            first = subprocess.run(
                [sys.executable, "-c", FIRST_ANSWER, str(mine), f"{words[0]} edited locally"],
                capture_output=True, text=True, env=env, check=True,
            )  # fmt: skip
            runs.append(json.loads(first.stdout.strip().splitlines()[-1]))
        totals = [run["events"][-1][1] for run in runs]
        median = sorted(runs, key=lambda run: run["events"][-1][1])[len(runs) // 2]
        print(
            f"first answer, teammate with the base ({median['files']} files in the overlay,"
            f" {median['results']} results): median {statistics.median(totals):.2f} s of"
            f" {', '.join(f'{t:.2f}' for t in totals)} [target <= 5 s on the stdlib]"
        )
        print(
            "  the median run, each step's end: s since start, + since the step before, and"
            " the CPU s spent meanwhile (all threads, ended workers; above the wall: in parallel)"
        )
        last = spent = 0.0
        for what, at, cpu in median["events"]:
            print(f"  {at:6.2f} +{at - last:5.2f} cpu {cpu - spent:5.2f}  {what}")
            last, spent = at, cpu
        from codecite_lsp.core.config import load_config
        from codecite_lsp.retrieve.retriever import open_retriever

        os.environ["CODECITE_BASE"] = uri
        layered = open_retriever(mine, load_config(mine), in_memory=True)
        del os.environ["CODECITE_BASE"]
        local = open_retriever(ci, load_config(ci), in_memory=True)
        for retriever in (layered, local):
            retriever.store.wait_for_view()
        queries = _queries(ci, args.queries) + words[: args.queries // 3]
        timings: dict[str, list[float]] = {"base + overlay": [], "local only": []}
        for query in queries * 2:  # the first round warms both; only the second is counted
            for name, retriever in (("base + overlay", layered), ("local only", local)):
                start = time.perf_counter()
                retriever.search(query, limit=10)
                timings[name].append(time.perf_counter() - start)
        for name, values in timings.items():
            counted = values[len(queries) :]
            print(
                f"search {name}: p50 {statistics.median(counted) * 1000:.1f} ms,"
                f" p95 {_p(counted, 0.95) * 1000:.1f} ms ({len(counted)} queries)"
            )
        ratio = _p(timings["base + overlay"][len(queries) :], 0.95) / _p(
            timings["local only"][len(queries) :], 0.95
        )
        print(f"p95 base + overlay / local only: {ratio:.2f}x [target <= 2x]")
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
