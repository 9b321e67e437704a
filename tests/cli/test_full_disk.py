"""`codecite index` on a disk that fills up mid-pass: a clear error, no traceback, and the index
as it was: still searchable, never reset, finished by the next run once there is room.

The small disk is a real tmpfs, mounted in a mount namespace of the test's own (``unshare``), so
the test needs no privilege and leaves nothing mounted."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def write_module(path: Path, word: str, functions: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            f"def {word}_{n}(request, limit={n}):\n"
            f'    """Answer the {word} request {n} within its limit."""\n'
            f"    values = [request.get(f'{word}{{k}}') for k in range(limit)]\n"
            f"    return sorted(v for v in values if v)\n\n\n"
            for n in range(functions)
        )
    )


def test_a_full_disk_keeps_the_index_and_says_so(tmp_path: Path) -> None:
    assert shutil.which("unshare"), "util-linux's unshare is needed to mount a small disk"
    repo, disk = tmp_path / "repo", tmp_path / "disk"
    disk.mkdir()
    out = tmp_path / "out"  # the commands' output, outside the repository
    out.mkdir()
    for n in range(10):
        write_module(repo / f"billing/invoice_{n}.py", "invoice", 8)
    more = tmp_path / "more.py"  # run once the first index is built: too much for the disk
    more.write_text(
        "from pathlib import Path\n"
        "for n in range(600):\n"
        "    body = ''.join(\n"
        "        f'def shipment_{n}_{m}(order_{m}):\\n    return order_{m}.ship_{n}({m})\\n\\n'\n"
        "        for m in range(100)\n"
        "    )\n"
        "    Path('shipping').mkdir(exist_ok=True)\n"
        "    Path(f'shipping/route_{n}.py').write_text(body)\n"
    )
    codecite = f"{shlex.quote(sys.executable)} -m codecite_lsp"
    index = f"{codecite} index --repo . --index-dir {disk}/idx --embedding none"
    search = f"{codecite} search --repo . --index-dir {disk}/idx"
    script = textwrap.dedent(
        f"""\
        set -u
        cd {shlex.quote(str(repo))}
        mount -t tmpfs -o size=2m tmpfs {disk}
        {index} > {out}/first.out 2>&1 || exit 10
        {shlex.quote(sys.executable)} {more}
        {index} > {out}/full.out 2> {out}/full.err; echo "full disk: $?"
        {search} "invoice request within its limit" > {out}/before.out 2>&1; echo "search: $?"
        mount -o remount,size=256m {disk}
        {index} > {out}/again.out 2>&1; echo "with room: $?"
        {search} "shipment order ship" > {out}/after.out 2>&1; echo "search: $?"
        """
    )
    done = subprocess.run(
        ["unshare", "-rm", "bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "RUST_LOG": "error"},
    )
    assert done.returncode == 0, done.stderr
    said = (out / "full.err").read_text()
    assert done.stdout.splitlines() == [
        "full disk: 1",
        "search: 0",
        "with room: 0",
        "search: 0",
    ], (done.stdout, said)
    assert "the disk is full" in said and "What was indexed before is kept" in said, said
    assert "Traceback" not in said and "damaged" not in said, said
    # The files indexed before are still found, and the next run wrote only what was missing.
    assert (out / "before.out").read_text().startswith("billing/invoice_"), said
    again = (out / "again.out").read_text()
    written = re.search(r"indexed 610 files, \d+ chunks in [\d.]+ s \((\d+) written", again)
    assert written is not None and int(written.group(1)) <= 600, again
    assert (out / "after.out").read_text().startswith("shipping/route_")
