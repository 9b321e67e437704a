"""The live watcher on a real inotify observer: what arrives in batches, how many, and when."""

from __future__ import annotations

import logging
import math
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from lsp_helpers import FIXTURE

from codecite_lsp.index.watcher import Watcher

DEBOUNCE_MS = 100


class Recorder:
    """Collects batches from the worker thread."""

    def __init__(self) -> None:
        self.batches: list[set[str]] = []
        self.times: list[float] = []
        self._lock = threading.Lock()
        self.fail_next = False

    def __call__(self, batch: set[str]) -> None:
        with self._lock:
            self.batches.append(set(batch))
            self.times.append(time.monotonic())
        if self.fail_next:
            self.fail_next = False
            raise RuntimeError("consumer crashed")

    def seen(self, start: int = 0) -> set[str]:
        with self._lock:
            return set().union(*self.batches[start:])

    def wait_for(self, paths: set[str], start: int = 0, timeout: float = 10.0) -> set[str]:
        """Wait until ``paths`` arrived, then for the tree to settle; all paths seen since start."""
        deadline = time.monotonic() + timeout
        while not paths <= self.seen(start):
            assert time.monotonic() < deadline, f"missing {paths - self.seen(start)}"
            time.sleep(0.02)
        time.sleep(DEBOUNCE_MS * 4 / 1000)  # late stragglers would show up now
        return self.seen(start)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "sample_repo"
    shutil.copytree(FIXTURE, root)
    return root


@pytest.fixture
def watch(repo: Path) -> Iterator[Callable[..., tuple[Watcher, Recorder]]]:
    started: list[Watcher] = []

    def make(**kwargs: int) -> tuple[Watcher, Recorder]:
        recorder = Recorder()
        watcher = Watcher(
            repo, recorder, debounce_ms=kwargs.pop("debounce_ms", DEBOUNCE_MS), **kwargs
        )
        watcher.start()
        started.append(watcher)
        return watcher, recorder

    yield make
    for watcher in started:
        watcher.stop()


def test_create_modify_rename_delete_arrive_as_repo_relative_batches(
    repo: Path, watch: Callable[..., tuple[Watcher, Recorder]]
) -> None:
    watcher, rec = watch()
    assert watcher.watching
    new = repo / "keyvault" / "audit.py"

    start = len(rec.batches)
    new.write_text("def audit():\n    pass\n")
    assert rec.wait_for({"keyvault/audit.py"}, start) == {"keyvault/audit.py"}

    start = len(rec.batches)
    with (repo / "keyvault" / "keys.py").open("a") as handle:
        handle.write("# changed\n")
    assert rec.wait_for({"keyvault/keys.py"}, start) == {"keyvault/keys.py"}

    start = len(rec.batches)
    new.rename(repo / "docs" / "audit_moved.py")
    moved = {"keyvault/audit.py", "docs/audit_moved.py"}
    assert rec.wait_for(moved, start) == moved

    start = len(rec.batches)
    (repo / "docs" / "audit_moved.py").unlink()
    assert rec.wait_for({"docs/audit_moved.py"}, start) == {"docs/audit_moved.py"}


def test_a_renamed_folder_reports_both_folder_paths(
    repo: Path, watch: Callable[..., tuple[Watcher, Recorder]]
) -> None:
    _, rec = watch()
    start = len(rec.batches)
    (repo / "web" / "src").rename(repo / "web" / "lib")
    seen = rec.wait_for({"web/src", "web/lib"}, start)
    assert seen <= {"web/src", "web/lib", "web/src/client.ts", "web/lib/client.ts"}


def test_two_thousand_quick_writes_become_a_few_complete_batches(
    repo: Path, watch: Callable[..., tuple[Watcher, Recorder]]
) -> None:
    _, rec = watch(debounce_ms=200)
    (repo / "gen").mkdir()
    expected = {f"gen/m{i}.py" for i in range(2000)}
    started = time.monotonic()
    for i in range(2000):
        (repo / "gen" / f"m{i}.py").write_text(f"VALUE = {i}\n")
    writing = time.monotonic() - started
    seen = rec.wait_for(expected | {"gen"}, timeout=30)
    assert seen == expected | {"gen"}
    # At most one batch per second of writing (the latency cap) plus the quiet tail.
    assert len(rec.batches) <= math.ceil(writing) + 2, (len(rec.batches), writing)
    assert len(rec.batches) <= 10


def test_continuous_load_still_delivers_about_every_second(
    repo: Path, watch: Callable[..., tuple[Watcher, Recorder]]
) -> None:
    _, rec = watch(debounce_ms=200, max_latency_ms=1000)
    target = repo / "keyvault" / "keys.py"
    started = time.monotonic()
    while time.monotonic() - started < 2.6:  # never quiet for 200 ms
        with target.open("a") as handle:
            handle.write("# tick\n")
        time.sleep(0.03)
    delivered_while_busy = [t for t in rec.times if t < started + 2.6]
    assert len(delivered_while_busy) >= 2


def test_ignored_paths_never_reach_the_consumer(
    repo: Path, watch: Callable[..., tuple[Watcher, Recorder]]
) -> None:
    (repo / ".codecite").mkdir()
    watcher, rec = watch()
    for rel in [
        "app.log",  # .gitignore: *.log
        "build/out.py",  # .gitignore: build/
        "node_modules/pkg/index.js",
        ".git/index",
        ".codecite/chunks.lance",
        ".env.local",
        "certs/server.pem",
        "web/node_modules/react/index.js",
        "keyvault/__pycache__/keys.cpython-311.pyc",
    ]:
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("ignored\n")
    (repo / ".env").write_text("API_SECRET=changed\n")
    (repo / "keyvault" / "sentinel.py").write_text("X = 1\n")  # the only path that counts
    seen = rec.wait_for({"keyvault/sentinel.py"})
    assert seen == {"keyvault/sentinel.py", "certs"}  # a new folder that is not ignored itself
    watcher.notify([".env", "build/x.py", "../outside.py", str(repo.parent / "elsewhere.py")])
    time.sleep(DEBOUNCE_MS * 4 / 1000)
    assert rec.seen() == seen


def test_an_edited_gitignore_is_applied_to_the_next_events(
    repo: Path, watch: Callable[..., tuple[Watcher, Recorder]]
) -> None:
    _, rec = watch()
    start = len(rec.batches)
    with (repo / ".gitignore").open("a") as handle:
        handle.write("*.tmp\n")
    assert rec.wait_for({".gitignore"}, start) == {".gitignore"}  # the consumer re-scans

    start = len(rec.batches)
    (repo / "scratch.tmp").write_text("now ignored\n")
    (repo / "keyvault" / "after.py").write_text("X = 1\n")
    assert rec.wait_for({"keyvault/after.py"}, start) == {"keyvault/after.py"}

    start = len(rec.batches)
    (repo / ".gitignore").write_text("build/\n")
    (repo / "scratch.tmp").write_text("indexed again\n")
    assert rec.wait_for({".gitignore", "scratch.tmp"}, start) == {".gitignore", "scratch.tmp"}


def test_notify_shares_the_debounce_queue_with_file_events(
    repo: Path, watch: Callable[..., tuple[Watcher, Recorder]]
) -> None:
    watcher, rec = watch(debounce_ms=300)
    start = len(rec.batches)
    (repo / "keyvault" / "tokens.py").write_text("TOKENS = []\n")
    watcher.notify(["README.md", str(repo / "docs" / "operations.md")])
    expected = {"keyvault/tokens.py", "README.md", "docs/operations.md"}
    assert rec.wait_for(expected, start) == expected
    assert len(rec.batches) - start == 1


def test_a_failing_consumer_is_logged_and_the_watcher_keeps_going(
    repo: Path, watch: Callable[..., tuple[Watcher, Recorder]], caplog: pytest.LogCaptureFixture
) -> None:
    watcher, rec = watch()
    rec.fail_next = True
    with caplog.at_level(logging.ERROR, logger="codecite_lsp.index.watcher"):
        watcher.notify(["README.md"])
        rec.wait_for({"README.md"})
    assert "handling a batch of 1 paths failed" in caplog.text
    start = len(rec.batches)
    (repo / "keyvault" / "later.py").write_text("X = 2\n")
    assert rec.wait_for({"keyvault/later.py"}, start) == {"keyvault/later.py"}


def test_stop_is_prompt_and_nothing_arrives_afterwards(
    repo: Path, watch: Callable[..., tuple[Watcher, Recorder]]
) -> None:
    watcher, rec = watch(debounce_ms=500)
    (repo / "keyvault" / "pending.py").write_text("X = 3\n")
    watcher.notify(["README.md"])
    threads_before = {t.name for t in threading.enumerate()}
    assert "codecite-watcher" in threads_before
    stopper = threading.Thread(target=watcher.stop)  # its time: bench/bench_index.py --bounds
    stopper.start()
    stopper.join(timeout=30)  # a deadline, so that a stop that hangs fails the test
    assert not stopper.is_alive()
    assert "codecite-watcher" not in {t.name for t in threading.enumerate()}
    (repo / "keyvault" / "after_stop.py").write_text("X = 4\n")
    watcher.notify(["README.md"])
    time.sleep(0.8)
    assert rec.batches == []


def test_without_file_events_saves_still_come_through(tmp_path: Path) -> None:
    rec = Recorder()
    watcher = Watcher(tmp_path / "not-there-yet", rec, debounce_ms=DEBOUNCE_MS)
    watcher.start()
    try:
        assert not watcher.watching  # inotify cannot watch a missing folder: no crash
        watcher.notify(["src/main.py"])
        assert rec.wait_for({"src/main.py"}) == {"src/main.py"}
    finally:
        watcher.stop()


def test_paths_are_relative_to_a_symlinked_repository_path(tmp_path: Path) -> None:
    real = tmp_path / "real"
    shutil.copytree(FIXTURE, real)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    rec = Recorder()
    watcher = Watcher(link, rec, debounce_ms=DEBOUNCE_MS)
    watcher.start()
    try:
        (real / "keyvault" / "x.py").write_text("X = 1\n")
        watcher.notify([os.path.join(link, "README.md")])
        expected = {"keyvault/x.py", "README.md"}
        assert rec.wait_for(expected) == expected
    finally:
        watcher.stop()


def test_a_new_virtualenv_is_recognised_before_its_files_arrive(
    repo: Path, watch: Callable[..., tuple[Watcher, Recorder]]
) -> None:
    _, rec = watch()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / "env3")], check=True)
    (repo / "keyvault" / "sentinel.py").write_text("X = 1\n")
    seen = rec.wait_for({"keyvault/sentinel.py"}) - {"keyvault/sentinel.py"}
    # Folders made before pyvenv.cfg may slip through; no file of the virtualenv does.
    assert all((repo / rel).is_dir() for rel in seen), seen
    assert "env3/pyvenv.cfg" not in seen


# Nested folders created at once make watchdog watch the deeper ones twice (once walking the new
# parent, once on their own creation event), and it warns each time with the repr of every watch
# in the message: a stderr line of 100+ KB on a tree with node_modules, which stalled a client
# reading the server's stderr by lines. Run apart: pytest resets warning filters.
_WATCH_AGAIN = """
import sys, tempfile, time, warnings
from pathlib import Path
warnings.simplefilter("always")  # a filter installed by the watcher module still comes first
shown = []
warnings.showwarning = lambda message, *rest: shown.append(str(message))
root = Path(tempfile.mkdtemp())
if sys.argv[1] == "watcher":
    from codecite_lsp.index.watcher import Watcher
    watcher = Watcher(root, lambda batch: None, debounce_ms=50)
    watcher.start()
else:
    from watchdog.events import FileSystemEventHandler
    from watchdog.observers import Observer
    observer = Observer()
    observer.schedule(FileSystemEventHandler(), str(root), recursive=True)
    observer.start()
time.sleep(0.2)  # the root is watched
for tree in range(50):
    folder = root / f"t{tree}"
    for part in "abcdef":
        folder = folder / part
        folder.mkdir(parents=True)
        time.sleep(0)  # let the observer thread run between two folders
time.sleep(1.0)
print(sum("already exists for watch" in message for message in shown))
"""


def _watch_again_warnings(mode: str) -> int:
    run = subprocess.run(
        [sys.executable, "-c", _WATCH_AGAIN, mode], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    return int(run.stdout.split()[-1])


def test_watchdog_warnings_about_folders_watched_again_are_silenced() -> None:
    if _watch_again_warnings("watchdog") == 0:
        pytest.skip("this watchdog no longer warns about folders watched again")
    assert _watch_again_warnings("watcher") == 0


def test_a_name_that_is_not_utf8_does_not_sink_the_batch(
    repo: Path, watch: Callable[..., tuple[Watcher, Recorder]], tmp_path: Path
) -> None:
    from codecite_lsp.core.config import Config
    from codecite_lsp.index.indexer import Indexer

    _, recorder = watch()
    with open(os.path.join(os.fsencode(repo), b"caf\xe9.py"), "w") as handle:
        handle.write("def cafe():\n    return 1\n")
    (repo / "fresh.py").write_text("def fresh_helper():\n    return 2\n")
    batch = recorder.wait_for({"fresh.py"})
    assert all(path.isprintable() and path.encode() for path in batch)

    # the indexer, handed the raw name as well (a didSave, an old event), indexes the rest
    indexer = Indexer(repo, Config(embedding="none"))
    report = indexer.update_paths(
        [*batch, os.fsdecode(os.path.join(os.fsencode(repo), b"caf\xe9.py"))]
    )
    assert report.files >= 1
    assert [c.symbol for c in indexer.store.chunks_for_path("fresh.py")] == ["fresh_helper"]
