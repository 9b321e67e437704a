"""A large pass reads and chunks in worker processes, with the results of the inline path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import codecite_lsp
from codecite_lsp.core.config import Config
from codecite_lsp.ingest.scan import Skip, SourceFile
from codecite_lsp.ingest.workers import _WORKER_MAIN, PARALLEL_MIN_FILES, Job, prepare, prepared


def test_workers_give_the_inline_results_for_every_file(tmp_path: Path) -> None:
    config = Config()
    for n in range(PARALLEL_MIN_FILES + 10):
        body = "".join(f"def f{n}_{k}(x):\n    return x + {k}\n\n\n" for k in range(n % 7 + 1))
        (tmp_path / f"m{n}.py").write_text(body)
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2")
    paths = sorted(p.name for p in tmp_path.iterdir())
    jobs = [Job(tmp_path, path, config, None) for path in paths]
    # the file m0.py is already indexed at its revision: it is read but not chunked again
    unchanged = prepare(jobs[paths.index("m0.py")]).source
    assert isinstance(unchanged, SourceFile)
    jobs[paths.index("m0.py")] = Job(tmp_path, "m0.py", config, unchanged.revision)

    results = dict(prepared(jobs))  # completion order: compare by job
    assert len(results) == len(jobs)
    for job in jobs:
        inline, parallel = prepare(job), results[job]
        assert parallel.chunks == inline.chunks
        assert parallel.search_texts == inline.search_texts
        if isinstance(inline.source, Skip):
            assert parallel.source == inline.source
        else:
            assert isinstance(parallel.source, SourceFile)
            assert parallel.source.revision == inline.source.revision
    assert results[jobs[paths.index("m0.py")]].chunks is None
    assert isinstance(results[jobs[paths.index("blob.bin")]].source, Skip)


def test_a_worker_whose_server_exited_before_it_was_ready_leaves_quietly() -> None:
    """A server told to exit while it starts its workers closes their pipes first: a worker
    then printed a BrokenPipeError traceback into the editor's log."""
    read, write = os.pipe()
    os.close(read)  # the parent is gone before the worker says it is ready
    package_root = str(Path(codecite_lsp.__file__).parents[1])
    try:
        worker = subprocess.run(
            [sys.executable, "-c", _WORKER_MAIN, package_root],
            stdin=subprocess.DEVNULL, stdout=write, stderr=subprocess.PIPE, timeout=60,
        )  # fmt: skip
    finally:
        os.close(write)
    assert worker.returncode == 0
    assert b"Traceback" not in worker.stderr, worker.stderr.decode()
