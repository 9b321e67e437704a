"""Which base files a reader sees (index/overlay.py): only those whose content is the base's,
hashed once per stat and remembered for the next process."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from codecite_lsp.core.config import load_config
from codecite_lsp.core.records import file_revision
from codecite_lsp.index.overlay import Overlay
from codecite_lsp.ingest.scan import scan

FILES = {"kept.py": "x = 1\n", "edited.py": "y = 2\n", "docs/a.md": "# A\n"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
        old = time.time() - 60  # settled: written a minute ago
        os.utime(root / name, (old, old))
    return root


def _base(repo: Path) -> dict[str, str]:
    return {name: file_revision((repo / name).read_bytes()) for name in FILES}


class Counting(Overlay):
    """An overlay that counts the files it reads to hash."""

    read: list[str]

    def _matches(self, path: str) -> bool:
        self.read = [*getattr(self, "read", []), path]
        return super()._matches(path)


def test_the_next_process_hashes_only_the_files_whose_stat_changed(
    repo: Path, tmp_path: Path
) -> None:
    config, remembered = load_config(repo), tmp_path / "index" / "base-unchanged.json"
    base = _base(repo)
    first = Counting(repo, base, remembered)
    first.refresh(scan(repo, config).files)
    assert sorted(first.read) == sorted(FILES)  # nothing known yet: every file hashed
    assert all(first.same(name) for name in FILES)

    (repo / "edited.py").write_text("y = 3\n", encoding="utf-8")  # same size
    stat = (repo / "kept.py").stat()
    os.utime(repo / "edited.py", ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and an old mtime
    second = Counting(repo, base, remembered)
    second.refresh(scan(repo, config).files)
    assert second.read == ["edited.py"]  # its ctime moved: read again, the rest trusted
    assert second.same("kept.py") and second.same("docs/a.md")
    assert not second.same("edited.py")  # the edit is seen: the base's rows stay hidden


def test_what_is_remembered_for_another_base_is_not_trusted(repo: Path, tmp_path: Path) -> None:
    config, remembered = load_config(repo), tmp_path / "base-unchanged.json"
    Overlay(repo, _base(repo), remembered).refresh(scan(repo, config).files)
    other = {**_base(repo), "kept.py": file_revision(b"x = 0\n")}  # a newer base changed it
    overlay = Counting(repo, other, remembered)
    overlay.refresh(scan(repo, config).files)
    assert sorted(overlay.read) == sorted(FILES)
    assert not overlay.same("kept.py")


def test_a_damaged_record_is_hashed_again(repo: Path, tmp_path: Path) -> None:
    remembered = tmp_path / "base-unchanged.json"
    remembered.write_text('{"base": 3, "hashed": [1, 2', encoding="utf-8")
    overlay = Counting(repo, _base(repo), remembered)
    overlay.refresh(scan(repo, load_config(repo)).files)
    assert sorted(overlay.read) == sorted(FILES)
    assert all(overlay.same(name) for name in FILES)
