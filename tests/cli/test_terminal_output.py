"""Repository text on a terminal is shown, never obeyed: escape sequences in a docstring or a
file name cannot clear the screen, retitle the window or hide a line, and a bidi override
(Trojan Source) is visible; output piped to a program stays exact."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from codecite_lsp.core.visible import for_terminal

pytestmark = pytest.mark.slow

SOURCE = (
    "def rotate_key(store):\n"
    '    """Rotate the API key.\x1b]0;owned\x07\x1b[2J"""\n'
    "    store.revoke(store.current)\n"
    "    return store.issue()\n"
)


def test_controls_and_bidi_are_written_as_their_escapes() -> None:
    shown = for_terminal("a\x1b[2Jb\rc\td\ne\u202ef\x9bg\x7f")
    assert shown == "a\\x1b[2Jb\\x0dc\td\ne<U+202E>f\\x9bg\\x7f"
    assert for_terminal("naïve café → ok 日本") == "naïve café → ok 日本"


def _on_a_terminal(command: list[str], cwd: Path) -> bytes:
    """What ``command`` writes to a pseudo-terminal (stdout and stderr both)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "CODECITE_EMBEDDING": "none", "RUST_LOG": "error"}
    process = subprocess.Popen(command, cwd=cwd, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    out = b""
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the terminal's other end closed
            break
        if not data:
            break
        out += data
    os.close(leader)
    assert process.wait(timeout=120) == 0, out
    return out


def test_repository_text_on_a_terminal_cannot_act_on_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "keys.py").write_text(SOURCE)
    (repo / "evil\x1b]0;title\x07.py").write_text("def evil():\n    return 1\n")
    (repo / "roles_admin\u202eyp.py").write_text("def check_roles():\n    return True\n")
    codecite = [sys.executable, "-m", "codecite_lsp"]

    index = _on_a_terminal([*codecite, "index", "--repo", "."], repo)
    answer = _on_a_terminal([*codecite, "ask", "How is the API key rotated?", "--repo", "."], repo)
    found = _on_a_terminal([*codecite, "search", "check roles", "--repo", "."], repo)

    for shown in (index, answer, found):
        assert b"\x1b" not in shown and b"\xe2\x80\xae" not in shown, shown  # ESC, U+202E
    assert b"evil\\x1b]0;title\\x07.py" in index  # the progress bar's path
    assert b"Rotate the API key.\\x1b]0;owned\\x07\\x1b[2J" in answer
    assert found.startswith(b"roles_admin<U+202E>yp.py:1-2"), found

    piped = subprocess.run(
        [*codecite, "ask", "How is the API key rotated?", "--repo", "."],
        cwd=repo,
        capture_output=True,
        env={**os.environ, "CODECITE_EMBEDDING": "none", "RUST_LOG": "error"},
    )
    assert b"Rotate the API key.\x1b]0;owned\x07\x1b[2J" in piped.stdout  # exact for programs


def test_text_the_output_encoding_cannot_hold_is_escaped_not_a_traceback(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "greet.py").write_text(
        'def greet():\n    """Say こんにちは to the user."""\n    return "こんにちは"\n'
    )
    env = {**os.environ, "CODECITE_EMBEDDING": "none", "RUST_LOG": "error"}
    codecite = [sys.executable, "-m", "codecite_lsp"]
    asked = subprocess.run(
        [*codecite, "ask", "How does greet say hello?", "--repo", "."],
        cwd=repo,
        capture_output=True,
        env={**env, "PYTHONIOENCODING": "ascii"},
    )
    assert asked.returncode == 0, asked.stderr
    assert b'return "\\u3053\\u3093\\u306b\\u3061\\u306f"' in asked.stdout, asked.stdout
    assert b"Traceback" not in asked.stderr
