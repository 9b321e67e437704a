"""MCP server figures on this repository: time to the first tool call after start, and p50/p95
of search_code and verify_citations once indexed, through the SDK's stdio client.

    python bench/bench_mcp.py [--calls 100] [--starts 3]

The index goes to a temporary folder (--index-dir), so the working tree is left untouched.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from bench_server import DEFINITION, REPO, percentile  # also puts tests/ on sys.path
from lsp_helpers import server_env
from mcp import ClientSession, StdioServerParameters, stdio_client


def params(index_dir: Path) -> StdioServerParameters:
    command = ["-m", "codecite_lsp", "mcp", "--repo", str(REPO), "--index-dir", str(index_dir)]
    return StdioServerParameters(command=sys.executable, args=command, env=server_env())


def definitions() -> list[tuple[str, int, str, str]]:
    """(path, line, line text, name) of every def/class in the package."""
    found = []
    for path in sorted((REPO / "codecite_lsp").rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            match = DEFINITION.match(line)
            if match:
                found.append((path.relative_to(REPO).as_posix(), number, line, match.group(1)))
    return found


def server_cpu_seconds() -> float:
    """CPU time used so far by the server process this script started (Linux /proc): on a
    busy machine the wall-clock start-up says more about the neighbours than about the server."""
    ticks = os.sysconf("SC_CLK_TCK")
    for child in Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split():
        if b"mcp" in Path(f"/proc/{child}/cmdline").read_bytes():
            fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime
    return float("nan")


async def first_call(
    index_dir: Path, tool: str, arguments: dict[str, Any]
) -> tuple[float, float, str]:
    """Seconds from spawning the server to the first tool result, the server's CPU seconds by
    then, and what the result said."""
    spawned = time.perf_counter()
    async with (
        stdio_client(params(index_dir)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool(tool, arguments)
        elapsed = time.perf_counter() - spawned
        cpu = server_cpu_seconds()
    data = result.structured_content or {}
    if result.is_error:
        return elapsed, cpu, "error"
    if tool == "search_code":
        return elapsed, cpu, data.get("note") or f"{len(data['results'])} results"
    return elapsed, cpu, data["summary"]


async def timed(session: ClientSession, tool: str, arguments: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = await session.call_tool(tool, arguments)
    elapsed = time.perf_counter() - started
    assert not result.is_error, result.content
    return elapsed


async def steady(index_dir: Path, calls: int) -> None:
    """search_code and verify_citations latency once the index is built."""
    rng = random.Random(14)
    defs = rng.sample(definitions(), calls)
    async with (
        stdio_client(params(index_dir)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        while True:  # until the first index pass is over
            probe = await session.call_tool("search_code", {"query": "Session"})
            if not (probe.structured_content or {}).get("note"):
                break
            await anyio.sleep(0.5)
        searches = [
            await timed(session, "search_code", {"query": name, "limit": 10})
            for _, _, _, name in defs
        ]
        checks = []
        for path, line, text, _ in defs:
            citations = [  # a true quote, the same quote cited 7 lines off, a fabricated one
                {"path": path, "start_line": line, "end_line": line, "quote": text},
                {"path": path, "start_line": line + 7, "end_line": line + 7, "quote": text},
                {"path": path, "start_line": line, "end_line": line, "quote": "x = made_up(1)"},
            ]
            checks.append(await timed(session, "verify_citations", {"citations": citations}))
    for tool, times in (("search_code", searches), ("verify_citations (3 quotes)", checks)):
        print(
            f"{tool}, {len(times)} calls: p50 {statistics.median(times) * 1000:.1f} ms, "
            f"p95 {percentile(times, 0.95) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms"
        )


async def main(calls: int, starts: int) -> None:
    # Wall-clock start-up figures depend on how busy the machine is: say how busy it was.
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as scratch:
        index_dir = Path(scratch) / "index"
        seconds, cpu, said = await first_call(index_dir, "search_code", {"query": "Session"})
        print(
            f"first tool call, no index yet (search_code): {seconds:.2f} s, "
            f"server CPU {cpu:.2f} s ({said})"
        )
        await steady(index_dir, calls)
        search = {"query": "verify citations"}
        verify = {
            "citations": [{"path": "README.md", "start_line": 1, "end_line": 1, "quote": "#"}]
        }
        for tool, arguments in (("search_code", search), ("verify_citations", verify)):
            runs = [await first_call(index_dir, tool, arguments) for _ in range(starts)]
            times = [seconds for seconds, _, _ in runs]
            cpus = [cpu for _, cpu, _ in runs]
            print(
                f"first tool call, index on disk ({tool}), {starts} starts: median "
                f"{statistics.median(times):.2f} s, max {max(times):.2f} s, server CPU median "
                f"{statistics.median(cpus):.2f} s ({'; '.join(sorted({s for *_, s in runs}))})"
            )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--starts", type=int, default=3)
    options = parser.parse_args()
    anyio.run(main, options.calls, options.starts)
