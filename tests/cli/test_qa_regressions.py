"""Problems a first-time user hit (QA pass), each pinned by what that user would see."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import Future
from pathlib import Path

import pytest
import pytest_lsp
from corpora import write_trainable_tree
from lsp_helpers import FIXTURE, copy_repo, init_params, request, server_config, wait_indexed
from lsprotocol import types
from pytest_lsp import LanguageClient

from codecite_lsp.core.config import ConfigError, load_config
from codecite_lsp.core.records import outside_source
from codecite_lsp.index.manifest import folder_fingerprint
from codecite_lsp.offline.extractive import answer


def codecite(repo: Path, index_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codecite_lsp", *args, "--repo", str(repo),
         "--index-dir", str(index_dir)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "RUST_LOG": "error", "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )  # fmt: skip


def sample(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    return repo


# -- configuration ------------------------------------------------------------------------------


def test_a_config_file_that_is_not_utf8_is_named_not_a_traceback(tmp_path: Path) -> None:
    repo = sample(tmp_path)
    (repo / ".codecite.toml").write_bytes(b"\xff\xfemodel = 'x'\n")
    done = codecite(repo, tmp_path / "index", "search", "rotate")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert ".codecite.toml: cannot be read" in done.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_model_timeout_must_be_a_positive_finite_number(tmp_path: Path, value: str) -> None:
    # nan disabled the hard deadline; 0 made every model call time out at once.
    with pytest.raises(ConfigError, match="model_timeout"):
        load_config(tmp_path, environ={"CODECITE_MODEL_TIMEOUT": value})


def test_relevance_floor_above_one_is_rejected_not_a_silent_refusal_of_everything(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match="relevance_floor must be between 0 and 1"):
        load_config(tmp_path, environ={"CODECITE_RELEVANCE_FLOOR": "5"})
    assert load_config(tmp_path, environ={"CODECITE_RELEVANCE_FLOOR": "1"}).relevance_floor == 1.0


# -- command line -------------------------------------------------------------------------------


def test_an_index_dir_that_cannot_be_created_is_a_clear_error(tmp_path: Path) -> None:
    repo = sample(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    done = codecite(repo, blocker, "index")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert str(blocker) in done.stderr


def test_a_first_search_indexes_the_repository_and_leaves_it_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No index yet: the search builds the keyword index, answers from it, then fills the
    vectors, so the index is complete when the command ends (an index pass finds nothing)."""
    # One chunk per function (merged, the tree is 20 chunks): enough for the default embedder.
    monkeypatch.setenv("CODECITE_CHUNK_BUDGET", "150")
    repo = sample(tmp_path)
    write_trainable_tree(repo)
    done = codecite(repo, tmp_path / "index", "search", "handler_3_7", "--json")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]  # stdout: the results alone
    assert results[0]["path"] == "module_3.py"
    said = done.stderr.splitlines()
    assert said[0] == "codecite: no index yet; indexing the repository first"
    assert said[-1].startswith("indexed ") and "written" in said[-1], said
    again = codecite(repo, tmp_path / "index", "index")
    assert again.stdout.strip().endswith("unchanged since the last pass"), again.stdout
    explained = codecite(repo, tmp_path / "index", "search", "rotate key", "--explain").stdout
    assert "vector +" in explained, explained  # the next search is hybrid


def test_an_index_of_an_earlier_layout_is_rebuilt_by_each_command_never_reported_unchanged(
    tmp_path: Path,
) -> None:
    """After an upgrade that changes the index's layout (its words, its columns), `codecite
    index` said "unchanged since the last pass" and kept the old index; `codecite search` found
    it emptied on opening and printed "no results"."""
    repo, index = sample(tmp_path), tmp_path / "index"

    def written_by_an_earlier_version() -> None:
        assert codecite(repo, index, "index").returncode == 0
        meta = json.loads((index / "meta.json").read_text())
        (index / "meta.json").write_text(json.dumps({**meta, "schema_version": 1}))
        stored = json.loads((index / "manifest.json").read_text())
        stored["settings"].pop("layout", None)  # as an earlier version wrote it, and with the
        stored["folder"] = folder_fingerprint(index)  # index folder as that version left it
        (index / "manifest.json").write_text(json.dumps(stored))

    written_by_an_earlier_version()
    again = codecite(repo, index, "index")
    assert "unchanged" not in again.stdout and "8 written" in again.stdout, again.stdout
    assert "written by another version of codecite; rebuilding it" in again.stderr
    assert json.loads((index / "meta.json").read_text())["schema_version"] != 1
    written_by_an_earlier_version()
    found = codecite(repo, index, "search", "rotate_key")
    assert found.stdout.startswith("keyvault/keys.py:"), (found.stdout, found.stderr)
    assert "rebuilding it first" in found.stderr.splitlines()[0]


def test_an_empty_search_query_is_an_error_like_an_empty_question(tmp_path: Path) -> None:
    done = codecite(sample(tmp_path), tmp_path / "index", "search", "   ")
    assert done.returncode == 2
    assert "the query is empty" in done.stderr


def test_ask_after_edits_quotes_the_current_files(tmp_path: Path) -> None:
    """Without a watcher, ask used to quote lines from the index that the files no longer held,
    and cite deleted files, as verified answers."""
    repo = sample(tmp_path)
    index = tmp_path / "index"
    assert codecite(repo, index, "index").returncode == 0
    keys = repo / "keyvault" / "keys.py"
    keys.write_text("\n" * 20 + keys.read_text())  # every line moves down by 20
    (repo / "docs" / "operations.md").unlink()

    done = codecite(repo, index, "ask", "What is the grace period of a retired key?", "--json")
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["status"] == "answered", reply
    citations = [c for span in reply["spans"] for c in span.get("citations", [])]
    assert citations
    for citation in citations:
        assert citation["path"] != "docs/operations.md"
        lines = (repo / citation["path"]).read_text().splitlines()
        cited = "\n".join(lines[citation["start_line"] - 1 : citation["end_line"]])
        assert citation["quote"].strip() and citation["quote"].strip() in cited


# -- extractive answers -------------------------------------------------------------------------


def test_a_module_level_line_is_not_said_to_be_inside_the_next_function() -> None:
    text = (
        '"""Support for tasks."""\n'
        "\n"
        "__all__ = (\n"
        "    'shield', 'gather', 'wait_for',\n"
        ")\n"
        "\n"
        "\n"
        "def current_task(loop=None):\n"
        "    return None\n"
    )
    source = outside_source(
        label="S1", path="asyncio/tasks.py", start_line=1, end_line=9, text=text,
        symbol="current_task", content_hash="h", revision="r", start_byte=0,
    )  # fmt: skip
    reply = json.loads(answer("where is shield exported?", [source]))
    claims = [span for span in reply["spans"] if span["kind"] == "claim"]
    assert claims
    # Line 4 is quoted as part of its whole statement, `__all__ = (...)` (lines 3-5).
    exports = [
        c for c in claims if c["citations"][0]["start_line"] <= 4 <= c["citations"][0]["end_line"]
    ]
    assert exports, claims
    assert "current_task" not in exports[0]["text"]


# -- language server ----------------------------------------------------------------------------


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient, tmp_path: Path):
    await lsp_client.initialize_session(init_params("visual-studio-code", copy_repo(tmp_path)))
    yield
    await lsp_client.shutdown_session()


async def test_the_word_under_the_cursor_in_a_git_ignored_file_is_not_recorded(
    client: LanguageClient, tmp_path: Path
) -> None:
    """A token in a git-ignored file (here ``*.log``) went into history and the prompt's context
    note when the user asked with the cursor on it."""
    repo = tmp_path / "repo"
    log = repo / "deploy.log"
    log.write_text("retry with token=LEAKEDTOKEN12345\n")
    await wait_indexed(client)
    column = log.read_text().index("LEAKEDTOKEN12345") + 3
    uri = log.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="log", version=1, text=log.read_text()
            )
        )
    )
    position = {"line": 0, "character": column}
    await request(client, "codecite/ask", {"question": "what is this?", "uri": uri,
                                           "position": position})  # fmt: skip
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=0, character=column),
        )
    )
    assert hover is None
    recorded = [path.read_bytes() for path in (repo / ".codecite").glob("*.jsonl")]
    assert recorded, "the ask was recorded in history"
    assert not any(b"LEAKEDTOKEN12345" in data for data in recorded)


async def test_a_request_without_params_is_answered_not_left_hanging(
    client: LanguageClient,
) -> None:
    """JSON-RPC lets a request omit ``params``; the server used to drop it, so the editor waited
    for ever."""
    futures = {}
    for method in ("codecite/status", "codecite/search"):
        future: Future[object] = Future()
        client.protocol._request_futures[method] = future
        client.protocol._send_data({"jsonrpc": "2.0", "id": method, "method": method})
        futures[method] = asyncio.wrap_future(future)
    status = await asyncio.wait_for(futures["codecite/status"], 20)
    assert "roots" in status._asdict()
    with pytest.raises(Exception, match="params must be an object"):
        await asyncio.wait_for(futures["codecite/search"], 20)


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_exit_while_indexing_is_quick_and_quiet(tmp_path: Path) -> None:
    """Exit during an index pass used to take seconds and write megabytes of tracebacks (late
    progress reports to a closed stdout) into the editor's log."""
    repo = tmp_path / "many"
    repo.mkdir()
    for n in range(400):
        (repo / f"mod_{n}.py").write_text(
            "".join(f"def f_{n}_{i}(x):\n    return x + {i}\n\n\n" for i in range(30))
        )
    server = subprocess.Popen(
        [sys.executable, "-m", "codecite_lsp", "serve"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "RUST_LOG": "error", "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None

    def read() -> dict[str, object]:
        assert server.stdout is not None
        length = 0
        while line := server.stdout.readline().strip():
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return dict(json.loads(server.stdout.read(length)))

    def send(message: dict[str, object]) -> None:
        assert server.stdin is not None
        server.stdin.write(_frame(message))
        server.stdin.flush()

    capabilities = {"window": {"workDoneProgress": True}}
    init = {"processId": None, "rootUri": repo.as_uri(), "capabilities": capabilities}
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    while True:  # until the index pass reports progress: it is running now
        message = read()
        if message.get("method") == "window/workDoneProgress/create":
            send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        params = message.get("params")
        progress = message.get("method") == "$/progress" and isinstance(params, dict)
        if progress and params["value"]["kind"] == "report":  # type: ignore[index]
            break
    send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    send({"jsonrpc": "2.0", "method": "exit"})
    try:
        _, stderr = server.communicate(timeout=10)
    finally:
        server.kill()
    assert server.returncode == 0
    assert b"Traceback" not in stderr, stderr[-2000:]
    assert b"never awaited" not in stderr, stderr[-2000:]  # the stdin reader's last chunk


def test_a_missing_api_key_is_refused_at_once_not_retried_as_a_server_error() -> None:
    from codecite_lsp.answer.llm import ModelError, complete

    saved = os.environ.pop("OPENAI_API_KEY", None)
    try:
        with pytest.raises(ModelError) as caught:
            complete(
                [{"role": "user", "content": "hi"}],
                "openai/gpt-4o-mini",
                timeout=10,
                retries=2,
                schema=None,
                backoff=5.0,  # a retry would take seconds; the assertion below forbids it
            )
    finally:
        if saved is not None:
            os.environ["OPENAI_API_KEY"] = saved
    assert caught.value.kind == "auth"
    assert caught.value.attempts == 1
    assert "API key" in str(caught.value)
