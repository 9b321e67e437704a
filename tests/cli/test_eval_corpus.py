"""`codecite eval` on files that are not replay corpora (issue 23): exit 2 (not 1, which says
the gate failed) with one line about the corpus, never a traceback; reads are bounded."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

CORPUS = Path(__file__).parents[1] / "fixtures" / "replay" / "corpus.json"
DEEP = "[" * 100_000 + "]" * 100_000


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from codecite_lsp.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def corpus() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(CORPUS.read_text(encoding="utf-8"))
    return loaded


def _case(field: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    def damage(corpus: dict[str, Any]) -> Any:
        corpus["cases"][0][field] = value
        return corpus

    return damage


def _drop_style(corpus: dict[str, Any]) -> Any:
    del corpus["cases"][0]["style"]
    return corpus


MALFORMED: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "nested too deeply": (lambda c: DEEP, "nested too deeply"),
    "deep inside the cases": (
        lambda c: '{"prompts": {}, "cases": ' + DEEP + "}",
        "nested too deeply",
    ),
    "a string where a case belongs": (
        lambda c: {**c, "cases": ["oops", *c["cases"][1:]]},
        "cases[0]: input should be a valid dictionary",
    ),
    "no replies": (_case("replies", []), "cases[0].replies: list should have at least 1 item"),
    "no style": (_drop_style, "cases[0].style is missing"),
    "an unknown prompt": (_case("prompt", "nowhere"), "names a prompt not in prompts: 'nowhere'"),
    "prompts a list": (lambda c: {**c, "prompts": []}, "prompts: input should be a valid dict"),
    "an expected outcome of another shape": (
        _case("expect", {"status": "maybe", "model_calls": 1}),
        "cases[0].expect.status: input should be 'answered' or 'refused'",
    ),
    "not JSON": (lambda c: "{'prompts': }", "not JSON"),
    "a JSON string": (lambda c: '"corpus"', "the corpus: input should be a valid dictionary"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_corpus_is_exit_2_with_a_plain_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], corpus: dict[str, Any], name: str
) -> None:
    damage, said = MALFORMED[name]
    made = damage(copy.deepcopy(corpus))
    path = tmp_path / "corpus.json"
    path.write_text(made if isinstance(made, str) else json.dumps(made))
    code, out, err = run(capsys, "eval", str(path))
    assert code == 2 and not out
    assert err.startswith(f"codecite: cannot replay {path}: ") and said in err, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom"])
def test_an_endless_device_is_not_read(capsys: pytest.CaptureFixture[str], path: str) -> None:
    code, out, err = run(capsys, "eval", path)
    assert code == 2 and not out
    said = "a character device, not a file: not a replay corpus"
    assert err == f"codecite: cannot replay {path}: {said}\n"


def test_a_file_over_the_cap_is_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(64 * 1024 * 1024 + 1)  # sparse: no 64 MB written
    code, out, err = run(capsys, "eval", str(path))
    assert code == 2 and not out
    assert err == f"codecite: cannot replay {path}: larger than 64 MB: not a replay corpus\n"


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    # Issue 42: the corpus's open waited for a writer forever.
    fifo = tmp_path / "corpus.json"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-m", "codecite_lsp", "eval", str(fifo)],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and not done.stdout
    said = "a FIFO (named pipe), not a file: not a replay corpus"
    assert done.stderr == f"codecite: cannot replay {fifo}: {said}\n"


def test_a_folder_is_said_plainly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "eval", str(tmp_path))
    assert code == 2 and err == f"codecite: cannot replay {tmp_path}: Is a directory\n"


def test_a_reply_nested_too_deeply_is_refused_by_the_gate_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], corpus: dict[str, Any]
) -> None:
    made = copy.deepcopy(corpus)
    made["cases"][0]["replies"] = [DEEP]
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(made))
    code, out, err = run(capsys, "eval", str(path))
    assert code == 1 and not err  # a valid corpus whose case the gate refuses: the gate fails
    case = made["cases"][0]["id"]
    assert f"{case}: expected" in out and "'reason': 'model_error'" in out
    assert out.endswith("FAIL\n")
