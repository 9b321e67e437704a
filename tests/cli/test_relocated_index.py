"""An index folder built by `codecite index`, copied with its repository to another path (new
mtimes and ctimes, as a download or a plain `cp -r` gives them) and the originals removed, stays
valid: content identity decides what is rewritten, so re-indexing the copy re-chunks nothing,
search and citations answer from it, and a file changed afterwards is the only one rewritten
(issue 24, item 4)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from codecite_lsp.answer.pipeline import Answerer
from codecite_lsp.core.answers import Answered, ClaimSpan
from codecite_lsp.core.config import Config
from codecite_lsp.index.indexer import Indexer
from codecite_lsp.retrieve.retriever import open_retriever

ROOT = Path(__file__).parents[2]
MODULES = 12
FILES_PER_MODULE = 20  # 240 files


def generated_tree(repo: Path) -> None:
    """Modules of small Python files, each defining one function of its own name."""
    for m in range(MODULES):
        package = repo / f"service_{m}"
        package.mkdir(parents=True)
        for f in range(FILES_PER_MODULE):
            name = f"settle_ledger_{m}_{f}"
            (package / f"part_{f}.py").write_text(
                f'def {name}(books):\n    """Close the books of region {m}, part {f}."""\n'
                f"    total = sum(books.entries_{m}_{f})\n    return total\n"
            )
    (repo / "rotation.py").write_text(
        "def rotate_signing_key(vault):\n"
        '    """Rotate the signing key: the old one is retired after the grace period."""\n'
        "    vault.retired_at = vault.clock()\n"
        "    return vault.issue()\n"
    )


def codecite_index(repo: Path, index_dir: Path) -> str:
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = ["index", "--quiet", "--repo", str(repo), "--index-dir", str(index_dir)]
    done = subprocess.run(
        [sys.executable, "-m", "codecite_lsp", *command],
        capture_output=True,
        text=True,
        timeout=600,
        env=environ,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def copied(source: Path, target: Path) -> None:
    """A copy that keeps no metadata (shutil.copy, not copy2): every mtime is new."""
    shutil.copytree(source, target, copy_function=shutil.copy)


def test_a_copied_index_is_reused_and_only_a_changed_file_is_rewritten(tmp_path: Path) -> None:
    first = tmp_path / "first"
    generated_tree(first / "repo")
    built = codecite_index(first / "repo", first / "index")
    files = MODULES * FILES_PER_MODULE + 1
    assert f"indexed {files} files" in built and f"({files} written" in built

    moved = tmp_path / "elsewhere" / "checkout"
    copied(first / "repo", moved / "repo")
    copied(first / "index", moved / "index")
    shutil.rmtree(first)  # nothing may still point at the old place
    repo, index_dir = moved / "repo", moved / "index"
    assert os.stat(repo / "rotation.py").st_mtime_ns != 0

    config = Config(index_dir=str(index_dir))
    again = Indexer(repo, config).run()
    assert (again.files, again.written_files, again.deleted_files) == (files, 0, 0)
    assert not again.unchanged  # the stat walk differed: the files' content said unchanged

    found = open_retriever(repo, config).search("settle_ledger_7_13", limit=1)
    assert [r.chunk.path for r in found] == ["service_7/part_13.py"]
    answer = Answerer(repo, config).ask("What happens to the old signing key when rotated?")
    assert isinstance(answer, Answered), answer
    cited = [c for s in answer.spans if isinstance(s, ClaimSpan) for c in s.citations]
    assert cited and all(c.path == "rotation.py" for c in cited)
    lines = (repo / "rotation.py").read_text().splitlines()
    assert all(c.quote in "\n".join(lines[c.start_line - 1 : c.end_line]) for c in cited)

    store = open_retriever(repo, config).store
    before = {
        p: [c.id for c in store.chunks_for_path(p)]
        for p in ("service_3/part_4.py", "service_3/part_5.py")
    }
    (repo / "service_3/part_4.py").write_text(
        "def reconcile_drifted_totals(books):\n    return books.drift()\n"
    )
    changed = codecite_index(repo, index_dir)
    assert f"indexed {files} files" in changed and "(1 written, 0 deleted" in changed
    store = open_retriever(repo, config).store
    assert [c.id for c in store.chunks_for_path("service_3/part_5.py")] == before[
        "service_3/part_5.py"
    ]
    assert [c.id for c in store.chunks_for_path("service_3/part_4.py")] != before[
        "service_3/part_4.py"
    ]
    hits = open_retriever(repo, config).search("reconcile_drifted_totals", limit=1)
    assert [r.chunk.path for r in hits] == ["service_3/part_4.py"]
    old_text = open_retriever(repo, config).search("settle_ledger_3_4", limit=3)
    assert all(r.chunk.path != "service_3/part_4.py" for r in old_text)
