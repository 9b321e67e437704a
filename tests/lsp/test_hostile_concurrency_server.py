"""A server and the CLI indexing one repository at once, and 100 saves in 2 s while a question
is answered (issue 42): the answer arrives, the index is whole and holds the last content."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import lancedb
import pytest
import pytest_lsp
from corpora import write_trainable_tree
from lsp_helpers import init_params, request, server_config, wait_for, wait_indexed
from lsprotocol import types
from pytest_lsp import LanguageClient

FILES = 40


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    write_trainable_tree(root, files=FILES, per_file=4)
    return root


@pytest_lsp.fixture(config=server_config(CODECITE_EMBEDDING="none"))
async def client(lsp_client: LanguageClient, tree: Path):
    # the CLI starts as the server does: both index the same folder at once
    cli = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "codecite_lsp", "index", "--repo", str(tree),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "CODECITE_EMBEDDING": "none"},
    )  # fmt: skip
    await lsp_client.initialize_session(init_params("visual-studio-code", tree))
    lsp_client.cli = cli  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def _word(version: int) -> str:
    """One search term per version ("quokkajj" for 99): digits would split into a term apart."""
    return "quokka" + "".join(chr(ord("a") + int(digit)) for digit in f"{version:02d}")


async def _paths(client: LanguageClient, query: str) -> list[str]:
    found = await request(client, "codecite/search", {"query": query, "limit": 50})
    return [r["path"] for r in found["results"]]


def _rows(tree: Path) -> list[tuple[str, int]]:
    table = lancedb.connect(tree / ".codecite" / "lance").open_table("chunks").to_arrow()
    paths, starts = table.column("path").to_pylist(), table.column("start_line").to_pylist()
    return list(zip(paths, starts, strict=True))


async def test_the_server_and_the_cli_indexing_at_once_leave_one_whole_index(
    client: LanguageClient, tree: Path
) -> None:
    cli = client.cli  # type: ignore[attr-defined]
    _, err = await asyncio.wait_for(cli.communicate(), 120)
    assert cli.returncode == 0, err.decode()
    await wait_indexed(client)
    status = await request(client, "codecite/status", {})
    assert status["roots"][0]["error"] is None, status
    assert status["roots"][0]["files_indexed"] == FILES, status
    assert (await _paths(client, "handler_7_2"))[0] == "module_7.py"
    rows = _rows(tree)
    assert len(rows) == len(set(rows)), "a chunk is in the index twice"
    assert {path for path, _ in rows} == {f"module_{i}.py" for i in range(FILES)}


async def test_100_saves_in_2_s_while_a_question_is_answered_end_with_the_last_content(
    client: LanguageClient, tree: Path
) -> None:
    await asyncio.wait_for(client.cli.communicate(), 120)  # type: ignore[attr-defined]
    await wait_indexed(client)
    churn = tree / "churn.py"
    asked = asyncio.ensure_future(
        request(client, "codecite/ask", {"question": "how is key 3.1 rotated?"})
    )
    for version in range(100):
        churn.write_text(f"def churn():\n    return '{_word(version)}'\n", encoding="utf-8")
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(
                uri=churn.as_uri()))
        )  # fmt: skip
        await asyncio.sleep(0.02)
    answer = await asyncio.wait_for(asked, 60)
    assert answer["status"] in ("answered", "refused"), answer
    assert await wait_for(lambda: _paths(client, _word(99)), lambda p: p == ["churn.py"])
    # No stale row: a search for an old version's word finds no chunk holding it (the semantic
    # leg may still show the file's current chunk, whose word is alike).
    old = await request(client, "codecite/search", {"query": _word(50), "limit": 50})
    assert not [r for r in old["results"] if _word(50) in r["text"]], old
    rows = _rows(tree)
    assert len(rows) == len(set(rows)), "a chunk is in the index twice"
    assert [line for path, line in rows if path == "churn.py"] == [1]
