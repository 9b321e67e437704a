"""read_regular: a path that should be a small file, whatever it turns out to be."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from codecite_lsp.core.files import TooLarge, read_regular


def test_a_regular_file_is_read_whole_with_its_stat(tmp_path: Path) -> None:
    path = tmp_path / ".gitignore"
    path.write_bytes(b"*.log\n")
    data, st = read_regular(path)
    assert data == b"*.log\n" and st.st_size == 6


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pyproject.toml")  # no writer: a blocking open would never return
    with pytest.raises(OSError) as raised:
        read_regular(tmp_path / "pyproject.toml")
    assert raised.value.errno == errno.EINVAL


def test_a_link_to_an_endless_device_is_refused(tmp_path: Path) -> None:
    os.symlink("/dev/zero", tmp_path / "meta.json")
    with pytest.raises(OSError) as raised:
        read_regular(tmp_path / "meta.json")
    assert raised.value.errno == errno.EINVAL


def test_a_file_over_the_limit_says_its_size(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 100)
    with pytest.raises(TooLarge) as raised:
        read_regular(tmp_path / "big", limit=10)
    assert raised.value.size == 100 and raised.value.errno == errno.EFBIG


def test_a_symlink_is_refused_when_links_are_not_followed(tmp_path: Path) -> None:
    (tmp_path / "real").write_text("*.tmp\n")
    os.symlink(tmp_path / "real", tmp_path / ".gitignore")
    assert read_regular(tmp_path / ".gitignore")[0] == b"*.tmp\n"
    with pytest.raises(OSError) as raised:
        read_regular(tmp_path / ".gitignore", follow=False)
    assert raised.value.errno == errno.ELOOP
