"""Language-server figures: initialize latency, extractive hover p50/p95 on this repository,
save -> searchable p95, server RSS after indexing the CPython standard library.

    python bench/bench_server.py            # everything (the stdlib part takes minutes)
    python bench/bench_server.py --no-stdlib

The servers work on a temporary copy of the repository (and of the stdlib), so the working
tree is left untouched.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from lsp_helpers import progress_ends, request, server_config, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient

REPO = Path(__file__).resolve().parent.parent
DEFINITION = re.compile(r"^\s*(?:def|class)\s+([A-Za-z_]\w*)")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def params(root: Path, index_dir: Path, **options: Any) -> types.InitializeParams:
    from pytest_lsp import client_capabilities

    return types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        initialization_options={"index_dir": str(index_dir), **options},
    )


async def start(root: Path, index_dir: Path, **options: Any) -> tuple[LanguageClient, float]:
    client: LanguageClient = await server_config().start()  # type: ignore[assignment]
    started = time.perf_counter()
    await client.initialize_session(params(root, index_dir, **options))
    return client, time.perf_counter() - started


async def stop(client: LanguageClient) -> None:
    await client.shutdown_session()
    await client.stop()


async def indexed(client: LanguageClient, timeout: float) -> None:
    async def ends() -> int:
        return len(progress_ends(client))

    await wait_for(ends, lambda n: n >= 1, timeout)


async def bench_initialize(scratch: Path, runs: int = 5) -> None:
    """Process start + initialize reply (what a user waits for when opening the editor)."""
    times = []
    for number in range(runs):
        spawned = time.perf_counter()
        client: LanguageClient = await server_config().start()  # type: ignore[assignment]
        await client.initialize_session(params(REPO, scratch / f"init-{number}"))
        times.append(time.perf_counter() - spawned)
        await stop(client)
    print(
        f"initialize (spawn + reply), {runs} runs: median {statistics.median(times) * 1000:.0f} ms,"
        f" max {max(times) * 1000:.0f} ms"
    )


def hover_targets(repo: Path, limit: int) -> list[tuple[Path, types.Position]]:
    """Definition names across the package: one hover per distinct symbol (no cache hits)."""
    seen: set[str] = set()
    targets = []
    for path in sorted((repo / "codecite_lsp").glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            match = DEFINITION.match(line)
            if match and match.group(1) not in seen:
                seen.add(match.group(1))
                targets.append((path, types.Position(line=number, character=match.start(1) + 1)))
    return targets[:limit]


async def bench_hover_and_save(scratch: Path) -> None:
    repo = scratch / "repo"
    shutil.copytree(REPO, repo, ignore=shutil.ignore_patterns(".git", ".codecite", "__pycache__"))
    client, _ = await start(repo, repo / ".codecite")
    try:
        started = time.perf_counter()
        await indexed(client, 900)
        status = (await request(client, "codecite/status", {}))["roots"][0]
        print(
            f"index of this repository: {status['files_indexed']} files, {status['chunks']} chunks"
            f" in {time.perf_counter() - started:.1f} s"
        )
        times, empty = [], 0
        for path, position in hover_targets(repo, 150):
            began = time.perf_counter()
            hover = await client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
                    position=position,
                )
            )
            times.append(time.perf_counter() - began)
            empty += hover is None
        print(
            f"hover (extractive), {len(times)} distinct symbols: "
            f"p50 {percentile(times, 0.5) * 1000:.0f} ms, "
            f"p95 {percentile(times, 0.95) * 1000:.0f} ms, "
            f"max {max(times) * 1000:.0f} ms ({empty} empty)"
        )
        await bench_save(client, repo)
    finally:
        await stop(client)


async def bench_save(client: LanguageClient, repo: Path, runs: int = 20) -> None:
    """Write a file, send didSave, poll codecite/search until the new word is found."""
    target = repo / "bench" / "_bench_saved.py"
    times = []
    for number in range(runs):
        word = f"zebraquartz{number}x"
        target.write_text(f"def saved_{number}():\n    return '{word}'\n", encoding="utf-8")
        began = time.perf_counter()
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=target.as_uri())
            )
        )

        async def search(word: str = word) -> list[dict[str, Any]]:
            found = await request(client, "codecite/search", {"query": word, "limit": 3})
            return found["results"]

        await wait_for(search, lambda r, w=word: any(w in x["text"] for x in r), 10)
        times.append(time.perf_counter() - began)
    print(
        f"save -> searchable, {runs} saves: p50 {percentile(times, 0.5) * 1000:.0f} ms, "
        f"p95 {percentile(times, 0.95) * 1000:.0f} ms"
    )


def rss_mb(pid: int) -> tuple[float, float]:
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


async def bench_stdlib(scratch: Path) -> None:
    """Index a copy of the CPython stdlib (without site-packages and the test suite)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    copy = scratch / "stdlib"
    shutil.copytree(
        stdlib,
        copy,
        ignore=shutil.ignore_patterns("site-packages", "test", "__pycache__", "*.pyc"),
        symlinks=True,
    )
    client, _ = await start(copy, scratch / "stdlib-index")
    try:
        started = time.perf_counter()
        await indexed(client, 3600)
        seconds = time.perf_counter() - started
        status = (await request(client, "codecite/status", {}))["roots"][0]
        server = client._server
        assert server is not None
        rss, peak = rss_mb(server.pid)
        print(
            f"stdlib: {status['files_indexed']} files, {status['chunks']} chunks indexed in "
            f"{seconds:.0f} s; server RSS {rss:.0f} MB (peak {peak:.0f} MB); "
            f"embedder {status['embedder']}"
        )
    finally:
        await stop(client)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-stdlib", action="store_true", help="skip the long stdlib run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codecite-bench-") as folder:
        scratch = Path(folder)
        await bench_initialize(scratch)
        await bench_hover_and_save(scratch)
        if not args.no_stdlib:
            await bench_stdlib(scratch)


if __name__ == "__main__":
    asyncio.run(main())
