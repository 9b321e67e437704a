"""`codecite index` and `search` on hostile repositories (issue 10): every run ends with the
rest indexed, the refused files listed with a reason, and a usable index."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from corpora import write_trainable_tree
from hostile_inputs import NEST_PY, kotlin_read_back_bomb

from codecite_lsp.core.config import load_config
from codecite_lsp.ingest.guard import UNGUARDED_ENV

ROOT = Path(__file__).parents[2]


def codecite(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CODECITE_EMBEDDING": "none"}
    return subprocess.run(
        [sys.executable, "-m", "codecite_lsp", *args, "--repo", str(repo)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "good.py").write_text("def rotate_key(store):\n    return store.rotate()\n")
    return root


def test_the_271_byte_markdown_file_is_indexed_not_a_crash(repo: Path) -> None:
    (repo / "a.md").write_text("# T\n\n" + ">" * 260 + " word\n")
    (repo / "b.md").write_text("# L\n\n" + "".join("  " * i + "- a\n" for i in range(300)))
    done = codecite(repo, "index", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "indexed 3 files" in done.stdout
    found = codecite(repo, "search", "word")
    assert found.returncode == 0 and "a.md:1-3" in found.stdout


def test_a_file_name_that_is_not_utf8_is_skipped_and_the_rest_indexed(repo: Path) -> None:
    with open(os.path.join(os.fsencode(repo), b"caf\xe9.py"), "w") as handle:
        handle.write("def cafe():\n    return 1\n")
    os.mkdir(os.path.join(os.fsencode(repo), b"dossier_\xff"))
    done = codecite(repo, "index", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "indexed 1 files" in done.stdout
    assert "skipped caf\\xe9.py: file name is not valid UTF-8" in done.stderr
    assert "skipped dossier_\\xff: file name is not valid UTF-8" in done.stderr
    found = codecite(repo, "search", "rotate_key")
    assert found.returncode == 0 and "good.py:1-2" in found.stdout


def test_a_file_name_with_a_newline_cannot_forge_an_output_line(repo: Path) -> None:
    """A newline in a file name would print as a line of its own: a search result, a citation or
    a skip the user never had. Such names are skipped, shown escaped on one line."""
    (repo / "a\nfake.py:9-9  forged  (1.000)\nb.py").write_text("def named():\n    return 1\n")
    (repo / "tab\there.py").write_text("def tabbed():\n    return 2\n")
    (repo / "café 日本.py").write_text("def unicode_named():\n    return 3\n")  # a fine name
    done = codecite(repo, "index", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "indexed 2 files" in done.stdout, done.stdout
    said = done.stderr.splitlines()
    forged = "skipped a\\x0afake.py:9-9  forged  (1.000)\\x0ab.py: file name holds a control"
    assert said[0].startswith(forged), said
    assert all(not line.startswith("fake.py") for line in said)
    assert "skipped tab\\x09here.py: file name holds a control character" in done.stderr
    found = codecite(repo, "search", "unicode named")
    assert found.stdout.startswith("café 日本.py:1-2"), found.stdout
    shown = codecite(repo, "search", "named").stdout.splitlines()
    assert shown and not any(line.startswith("fake.py") for line in shown), shown


def test_an_index_folder_whose_tables_link_elsewhere_writes_only_inside_it(
    repo: Path, tmp_path: Path
) -> None:
    """An index folder shipped with a checkout, its tables' folders links to folders of the
    user's: the links are removed (never what they point to), and every table is written
    inside the index folder."""
    outside = tmp_path / "documents"
    (outside / "notes").mkdir(parents=True)
    (outside / "notes" / "plan.txt").write_text("the user's own file\n")
    (repo / ".codecite" / "lance").mkdir(parents=True)
    for table in ("chunks", "files"):
        (repo / ".codecite" / "lance" / f"{table}.lance").symlink_to(outside)
    (repo / ".codecite" / "embedding").symlink_to(outside)

    done = codecite(repo, "index", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "lance/chunks.lance in" in done.stderr and "was a symlink; removed" in done.stderr
    assert sorted(p.relative_to(outside).as_posix() for p in outside.rglob("*")) == [
        "notes",
        "notes/plan.txt",
    ]
    assert not any(p.is_symlink() for p in (repo / ".codecite").rglob("*"))
    assert codecite(repo, "search", "rotate_key").stdout.startswith("good.py:1-2")


# --- a damaged index heals itself ----------------------------------------------------------------


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from codecite_lsp.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _files(folder: Path, suffix: str = "") -> list[Path]:
    return sorted(p for p in folder.rglob(f"*{suffix}") if p.is_file())


CORRUPTIONS = {
    "meta.json random bytes": lambda d: (d / "meta.json").write_bytes(os.urandom(200)),
    "full-text index files deleted": lambda d: [
        p.unlink() for p in _files(d / "lance" / "chunks.lance" / "_indices")
    ],
    "full-text index files truncated": lambda d: [
        _truncate(p) for p in _files(d / "lance" / "chunks.lance" / "_indices")
    ],
    "chunk data file truncated": lambda d: [
        _truncate(p) for p in _files(d / "lance" / "chunks.lance" / "data", ".lance")
    ],
    "vectors data file truncated": lambda d: [
        _truncate(p) for p in _files(d / "lance" / "vectors.lance" / "data", ".lance")
    ],
    "embedder model truncated": lambda d: [_truncate(p) for p in _files(d / "embedding", ".npz")],
    "chunks table folder deleted": lambda d: shutil.rmtree(d / "lance" / "chunks.lance"),
    "whole lance folder deleted": lambda d: shutil.rmtree(d / "lance"),
    # Damage no table rebuild repairs (issue 23): each failed every run until fixed by hand.
    "meta.json field of the wrong type": lambda d: _edit_meta(d, optimized_version="x"),
    "meta.json made a folder": lambda d: _replace(d / "meta.json", Path.mkdir),
    "index.lock made a folder": lambda d: [
        _replace(d / "index.lock", Path.mkdir),
        os.utime(d.parent / "module_3.py"),  # a pass runs (and locks), rather than "unchanged"
    ],
    "lance a dangling symlink": lambda d: _replace(d / "lance", _dangling),
    "chunks table a file": lambda d: _replace(d / "lance" / "chunks.lance", Path.touch),
}


def _edit_meta(index_dir: Path, **fields: object) -> None:
    meta = index_dir / "meta.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), **fields}))


def _replace(path: Path, make: Callable[[Path], object]) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
    make(path)


def _dangling(path: Path) -> None:
    path.symlink_to(path.parent / "gone")


@pytest.mark.parametrize("damage", sorted(CORRUPTIONS))
def test_each_corruption_then_index_then_search_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    monkeypatch.delenv("CODECITE_EMBEDDING", raising=False)
    monkeypatch.setenv("CODECITE_CHUNK_BUDGET", "200")  # one chunk per function
    repo = tmp_path / "repo"
    repo.mkdir()
    write_trainable_tree(repo)
    assert _run(capsys, "index", "--quiet", "--repo", str(repo))[0] == 0
    index_dir = repo / ".codecite"
    assert _files(index_dir / "embedding", ".npz") and _files(index_dir / "lance" / "vectors.lance")
    CORRUPTIONS[damage](index_dir)

    code, out, err = _run(capsys, "index", "--quiet", "--repo", str(repo))
    assert code == 0, err
    assert "Traceback" not in err
    assert "indexed 12 files, 144 chunks" in out
    from codecite_lsp.index.indexer import Indexer

    indexer = Indexer(repo, load_config(repo))
    assert indexer.store.vector_count(None) == 144  # the vectors (and the model) are back
    status = indexer.status()  # a new process: "indexed <time>" comes from meta.json
    assert status["chunks"] == 144 and status["last_update"] is not None
    code, out, err = _run(capsys, "search", "handler_3_7", "--repo", str(repo))
    assert code == 0, err
    assert out.splitlines()[0].startswith("module_3.py:")
    code, out, err = _run(capsys, "search", "rotate key rate limit", "--repo", str(repo))
    assert code == 0 and "module_" in out, err


def test_an_index_folder_that_is_a_broken_link_is_said_with_what_to_run(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index_dir = repo / ".codecite"
    index_dir.symlink_to(repo / "gone")  # maybe a disk not mounted yet: said, not bypassed
    for command in (["index", "--quiet"], ["search", "rotate"], ["ask", "What rotates keys?"]):
        code, out, err = _run(capsys, *command, "--repo", str(repo))
        assert code == 1 and not out
        assert err == (
            f"codecite: the index folder {index_dir} is a broken symlink, not a folder: move it "
            f"away (mv {index_dir} {index_dir}.old) or pass --index-dir DIR\n"
        )


@pytest.mark.parametrize("kind", ["file", "link to a file"])
def test_a_codecite_file_at_the_root_is_left_and_the_index_kept_in_the_cache(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    # Issue 42: the repository's own file had to be moved by hand before anything worked.
    cache = repo.parent / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    local = repo / ".codecite"
    if kind == "file":
        local.write_text("notes\n")
    else:
        (repo.parent / "notes.txt").write_text("notes\n")
        local.symlink_to(repo.parent / "notes.txt")
    code, out, err = _run(capsys, "index", "--quiet", "--repo", str(repo))
    assert code == 0, err
    where = next((cache / "codecite").iterdir())
    assert out.rstrip().endswith(
        f" - {local} is not a folder (left as it is); the index is kept in {where}"
    ), out
    assert (where / "meta.json").is_file()
    code, out, err = _run(capsys, "search", "rotate", "--repo", str(repo))
    assert code == 0 and out.strip() and out != "no results\n", err
    assert local.read_text() == "notes\n" and local.is_symlink() == (kind != "file")


@pytest.mark.parametrize("special", ["/dev/null", "fifo"])
def test_an_index_folder_that_is_a_device_or_pipe_is_never_to_be_moved(
    repo: Path, capsys: pytest.CaptureFixture[str], special: str
) -> None:
    """Not the user's file: the message names the flag, never a command moving a system file."""
    index_dir = Path(special)
    if special == "fifo":
        index_dir = repo.parent / "pipe"
        os.mkfifo(index_dir)
    for command in (["index", "--quiet"], ["search", "rotate"], ["ask", "What rotates keys?"]):
        code, out, err = _run(capsys, *command, "--repo", str(repo), "--index-dir", str(index_dir))
        assert code == 1 and not out
        said = f"codecite: the index folder {index_dir} is not a folder: pass --index-dir DIR\n"
        assert err == said


def test_links_in_a_checked_out_index_folder_never_write_outside_it(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository may ship its own .codecite/ whose files link to the user's: the lock's pid,
    trace and history lines and the log are written into the index folder, never through."""
    monkeypatch.setenv("CODECITE_EMBEDDING", "none")
    victims = {}
    (repo / ".codecite").mkdir()
    names = (
        "index.lock",
        "trace.jsonl",
        "history.jsonl",
        "manifest.json",
        "server.log",
        ".gitignore",
    )
    for name in names:
        victim = tmp_path / f"victim-{name}"
        victim.write_text("the user's own file\n")
        (repo / ".codecite" / name).symlink_to(victim)
        victims[name] = victim
    for command in (["index", "--quiet"], ["ask", "What rotates keys?"]):
        code, _out, err = _run(capsys, *command, "--repo", str(repo))
        assert code == 0, err
    for name, victim in victims.items():
        assert victim.read_text() == "the user's own file\n", name
    assert (repo / ".codecite" / "trace.jsonl").is_file()  # written where it belongs
    assert not (repo / ".codecite" / "trace.jsonl").is_symlink()


def test_ask_answers_when_nothing_can_be_written(repo: Path) -> None:
    """A full disk (every write fails with EFBIG here: RLIMIT_FSIZE 0): no refresh, no trace,
    no history, and still a reply, with each failure said once and no traceback. The file
    changed since it was indexed and the index could not follow: its indexed lines are not
    quoted as if the file still held them, and the reply says why and where to look."""
    import resource

    assert codecite(repo, "index", "--quiet").returncode == 0
    (repo / "good.py").write_text("def rotate_key(store):\n    return store.rotate(now=True)\n")
    done = subprocess.run(
        [sys.executable, "-m", "codecite_lsp", "ask", "rotate_key", "--repo", str(repo)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "CODECITE_EMBEDDING": "none"},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0)),
    )
    assert done.returncode == 0, done.stderr
    # Neither the old line (the file no longer holds it) nor the edit no refresh could index.
    assert "store.rotate()" not in done.stdout and "now=True" not in done.stdout, done.stdout
    assert "changed since it was indexed (good.py:1-2)" in done.stdout, done.stdout
    assert "  good.py:1-2" in done.stdout  # where to look
    assert "index not refreshed: File too large" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_save_on_a_damaged_index_rebuilds_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's path (watcher, didSave): update_paths heals as `codecite index` does."""
    from codecite_lsp.index.indexer import Indexer

    monkeypatch.setenv("CODECITE_EMBEDDING", "none")
    repo = tmp_path / "repo"
    repo.mkdir()
    write_trainable_tree(repo)
    assert _run(capsys, "index", "--quiet", "--repo", str(repo))[0] == 0
    CORRUPTIONS["chunk data file truncated"](repo / ".codecite")
    (repo / "module_0.py").write_text("def saved_just_now():\n    return 0\n")

    indexer = Indexer(repo, load_config(repo))
    report = indexer.update_paths(["module_0.py"])

    assert report.files == 12
    assert [c.symbol for c in indexer.store.chunks_for_path("module_0.py")] == ["saved_just_now"]
    code, out, err = _run(capsys, "search", "handler_3_7", "--repo", str(repo))
    assert code == 0 and out.startswith("module_3.py:"), err


def test_ask_answers_when_the_chunks_it_reads_back_crash_the_parser(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deep.kt indexes whole, but a run of its chunks read back aborts tree-sitter-kotlin (the
    checks off, standing for a crash no check foresees): the answer quotes the rest."""
    (repo / "Deep.kt").write_text(kotlin_read_back_bomb())
    (repo / "wrapping.py").write_text(NEST_PY)
    monkeypatch.setenv(UNGUARDED_ENV, "1")  # the commands' environment
    indexed = codecite(repo, "index")
    asked = codecite(repo, "ask", "What does nest do?")
    assert indexed.returncode == 0 and "0 skipped" in indexed.stdout, indexed
    assert asked.returncode == 0, asked.stderr[-500:]
    assert "wrapping.py:1-" in asked.stdout and "Wrap the key" in asked.stdout, asked.stdout
    assert asked.stderr.count("the parser crashed (SIGABRT) on Deep.kt read back") == 1


def test_an_index_whose_text_the_files_do_not_hold_is_never_quoted(repo: Path) -> None:
    """An index folder edited (or shipped with a checkout) so a chunk says what its unchanged
    file does not: the index says where to look, never what the lines say. Neither search nor
    ask shows the forged text, and the refusal says what to do."""
    import lancedb

    assert codecite(repo, "index", "--quiet").returncode == 0
    forged = "def rotate_key(store):\n    return None  # keys are never rotated\n"
    table = lancedb.connect(repo / ".codecite" / "lance").open_table("chunks")
    table.update(where="path = 'good.py'", values={"text": forged})

    indexed = codecite(repo, "index", "--quiet")  # the file is unchanged: nothing to rewrite
    assert indexed.returncode == 0 and "(0 written" in indexed.stdout, indexed.stdout
    found = codecite(repo, "search", "rotate_key", "--json")
    assert json.loads(found.stdout) == {"results": []}, found.stdout
    asked = codecite(repo, "ask", "How is a key rotated?")
    assert asked.returncode == 0, asked.stderr
    assert "never rotated" not in asked.stdout + asked.stderr
    assert "the index holds text for good.py:1-2 that the files do not" in asked.stdout
    assert "delete it and run `codecite index`" in asked.stdout


def test_settings_and_ignore_files_that_never_end_cost_nothing(repo: Path) -> None:
    """A checkout whose .gitignore, .codeciteignore, pyproject.toml, a nested .gitignore and the
    index's own meta.json are links to /dev/zero or FIFOs: reading them would wait forever or
    fill memory. Each is passed over with a reason, and the rest is indexed."""
    os.symlink("/dev/zero", repo / ".gitignore")
    os.symlink("/dev/zero", repo / ".codeciteignore")
    os.mkfifo(repo / "pyproject.toml")
    (repo / "pkg").mkdir()
    os.mkfifo(repo / "pkg" / ".gitignore")
    (repo / "pkg" / "mod.py").write_text("def helper():\n    return 2\n")
    (repo / ".codecite").mkdir()
    os.symlink("/dev/zero", repo / ".codecite" / "meta.json")

    refused = codecite(repo, "index", "--quiet")  # settings it cannot read: said, not guessed
    assert refused.returncode == 2, refused.stderr
    assert "pyproject.toml: cannot be read ([Errno 22] not a regular file" in refused.stderr
    (repo / "pyproject.toml").unlink()

    indexed = codecite(repo, "index", "--quiet")
    assert indexed.returncode == 0, indexed.stderr
    assert "indexed 2 files" in indexed.stdout, indexed.stdout
    assert "not reading ignore file" in indexed.stderr and "Traceback" not in indexed.stderr
    assert codecite(repo, "search", "helper").stdout.startswith("pkg/mod.py:1-2")
