"""Trust boundaries of the server (issue 10): which folders become roots, which files any door
may open, repository text made inert in hovers, bounded work on huge buffers, paged history and
skipped files reported with their reasons."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_helpers import (
    hover_at,
    hover_markdown,
    init_params,
    request,
    server_config,
    wait_for,
    wait_indexed,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

# Built here, so that no credential is written in this file.
TOKEN = "ghp_" + "Zq8Xw3Vb6Nm1Lk4Jh7Gf2Ds5Aa9Pp0Oo3Ii6"


def open_citation_params(path: str) -> types.ExecuteCommandParams:
    citation = {
        "path": path,
        "start_line": 1,
        "end_line": 1,
        "quote": "=",
        "content_hash": "",
        "revision": "",
    }
    return types.ExecuteCommandParams(command="codecite.openCitation", arguments=[citation])


@pytest.fixture
def hostile_repo(repo: Path) -> Path:
    (repo / "link_to_env.txt").symlink_to(repo / ".env")
    (repo / "debug.log").write_text("API_SECRET=sk-live-THISISAFAKESECRETDONOTLEAK\n")
    (repo / "keyvault" / "deploy.py").write_text(f'DEPLOY_TOKEN = "{TOKEN}"\n')
    (repo / "keyvault" / "rockets.py").write_text(
        "def launch_rockets(count):\n"
        '    """Launch [the rockets](command:workbench.action.terminal.new) now.\n\n'
        "    ![status](http://attacker.example/pixel.png) <img src=http://attacker.example/i>\n"
        '    """\n'
        "    return count\n\n\n"
        "def countdown():\n"
        "    return launch_rockets(3)\n"
    )
    return repo


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient, hostile_repo: Path):
    await lsp_client.initialize_session(init_params("visual-studio-code", hostile_repo))
    yield
    await lsp_client.shutdown_session()


async def test_open_citation_never_opens_a_private_file(client: LanguageClient, hostile_repo: Path):
    await wait_indexed(client)
    doors = {
        "link_to_env.txt": "ignored or secret",  # an in-repository symlink to .env
        str(hostile_repo / "debug.log"): "ignored or secret",  # git-ignored, by absolute path
        str(hostile_repo / ".env"): "ignored or secret",
        "keyvault/deploy.py": "contains a credential",  # skipped by the indexer for its key
    }
    for path, why in doors.items():
        resolution = await client.workspace_execute_command_async(open_citation_params(path))
        assert resolution["state"] == "gone", (path, resolution)
        assert why in resolution["reason"], (path, resolution)
        assert "lines" not in resolution
    assert client.shown_documents == []


async def test_search_and_history_show_nothing_of_a_private_file(
    client: LanguageClient, hostile_repo: Path
):
    await wait_indexed(client)
    found = await request(client, "codecite/search", {"query": "DEPLOY_TOKEN API_SECRET"})
    paths = {result["path"] for result in found["results"]}
    assert not paths & {"keyvault/deploy.py", ".env", "link_to_env.txt", "debug.log"}
    # A history entry citing a file that has become private since: resolved as gone, unread.
    entry = {
        "question": "q",
        "time": "2026-01-01T00:00:00+00:00",
        "answer": {
            "status": "answered",
            "trace_id": "t",
            "spans": [
                {
                    "kind": "claim",
                    "text": "the deploy token",
                    "citations": open_citation_params("keyvault/deploy.py").arguments,
                }
            ],
        },
    }
    (hostile_repo / ".codecite" / "history.jsonl").write_text(json.dumps(entry) + "\n")
    (page,) = (await request(client, "codecite/history", {}))["entries"]
    (cited,) = page["citations"]
    assert cited["resolution"]["state"] == "gone"
    assert "contains a credential" in cited["resolution"]["reason"]
    assert "lines" not in cited["resolution"]


async def test_repository_text_in_a_hover_is_inert(client: LanguageClient, hostile_repo: Path):
    from markdown_it import MarkdownIt

    await wait_indexed(client)
    markdown = hover_markdown(await hover_at(client, hostile_repo / "keyvault" / "rockets.py",
                                             "launch_rockets"))  # fmt: skip
    assert "rockets" in markdown
    html = MarkdownIt("commonmark").render(markdown)
    links = [part.split('"', 1)[0] for part in html.split('<a href="')[1:]]
    assert links, "the server's own citation links are still there"
    assert all(link.startswith("command:codecite.openCitation?") for link in links), links
    assert "<img" not in html
    assert "command:workbench.action.terminal.new" in markdown  # shown as text, not followed


async def test_status_reports_skipped_files_with_reasons(client: LanguageClient):
    await wait_indexed(client)
    (root,) = (await request(client, "codecite/status", {}))["roots"]
    skipped = {item["path"]: item["reason"] for item in root["skipped"]}
    assert root["skipped_count"] >= 2
    assert "secret" in skipped[".env"]
    assert "credential" in skipped["keyvault/deploy.py"]


async def test_history_is_paged_from_the_newest(client: LanguageClient, hostile_repo: Path):
    await wait_indexed(client)
    lines = [
        json.dumps(
            {
                "question": f"question {n}",
                "time": f"2026-01-01T00:00:{n:02d}+00:00",
                "answer": {
                    "status": "refused",
                    "trace_id": f"t{n}",
                    "reason": "ambiguous",
                    "detail": "",
                },
            }
        )
        for n in range(30)
    ]
    (hostile_repo / ".codecite" / "history.jsonl").write_text("\n".join(lines) + "\n")
    page = (await request(client, "codecite/history", {"limit": 3, "offset": 2}))["entries"]
    assert [entry["question"] for entry in page] == ["question 27", "question 26", "question 25"]


async def test_a_huge_unsaved_buffer_is_explained_and_status_answered(
    client: LanguageClient, hostile_repo: Path
):
    await wait_indexed(client)
    path = hostile_repo / "keyvault" / "generated.py"
    rows = [f"def handler_{n}(event):\n    return rotate_key(event, {n})\n" for n in range(340_000)]
    text = "".join(rows)
    assert len(text) > 20_000_000
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=path.as_uri(), language_id="python", version=1, text=text
            )
        )
    )
    await request(client, "codecite/status", {})  # the 20 MB notification has been read
    hover = asyncio.ensure_future(
        client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
                position=types.Position(line=300_001, character=14),  # on rotate_key
            )
        )
    )
    # Both are answered, the hover from the cursor's region only (the whole 20 MB took 41 s):
    # how soon each is answered is bench/bench_lsp_bounds.py's figure, not a bound here.
    await request(client, "codecite/status", {})
    assert "rotate_key" in hover_markdown(await asyncio.wait_for(hover, 30))


async def test_system_folders_and_home_are_never_roots(tmp_path: Path, repo: Path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "config").write_text("Host prod\n  User deploy\n")
    etc_index = Path("/etc/.codecite")
    had_etc_index = etc_index.exists()
    client = await server_config(HOME=str(home)).start()
    try:
        params = init_params("visual-studio-code", repo)
        params.workspace_folders = [
            types.WorkspaceFolder(uri=uri, name="x")
            for uri in ("file:///etc", home.as_uri(), "file:///", repo.as_uri())
        ]
        await client.initialize_session(params)
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[
                        types.WorkspaceFolder(uri="file:///usr", name="usr"),
                        types.WorkspaceFolder(uri=(home / ".ssh").as_uri(), name="ssh"),
                    ],
                    removed=[],
                )
            )
        )

        async def said() -> list[str]:
            return [message.message for message in client.messages]

        messages = await wait_for(said, lambda found: len(found) >= 5)
        status: Any = await request(client, "codecite/status", {})
        assert [root["root"] for root in status["roots"]] == [str(repo)]
        for folder in ("/etc is a system folder", f"{home} is your home folder",
                       "/ is a system folder", "/usr is a system folder",
                       f"{home / '.ssh'} is a credentials folder"):  # fmt: skip
            assert any(folder in message for message in messages), (folder, messages)
        assert not (home / ".codecite").exists() and not (home / ".ssh" / ".codecite").exists()
        assert etc_index.exists() == had_etc_index
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_failed_trace_or_history_write_never_fails_a_request(
    client: LanguageClient, hostile_repo: Path
):
    await wait_indexed(client)
    index = hostile_repo / ".codecite"
    for name in ("trace.jsonl", "history.jsonl"):  # a write there now fails (EISDIR)
        (index / name).unlink(missing_ok=True)
        (index / name).mkdir()
    for _ in range(2):  # the failure is logged once, and never reaches the user
        answer = await request(client, "codecite/ask", {"question": "How is a key rotated?"})
        assert answer["status"] in ("answered", "refused")
    (root,) = (await request(client, "codecite/status", {}))["roots"]
    assert root["files_indexed"] >= 5 and root["error"] is None


async def test_a_root_whose_index_cannot_be_written_is_said_plainly(tmp_path: Path, repo: Path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    client = await server_config().start()
    try:
        options = {"index_dir": str(blocker / "index")}
        await client.initialize_session(init_params("neovim", repo, options))

        async def said() -> list[str]:
            return [message.message for message in client.messages]

        (message,) = await wait_for(said, lambda found: len(found) >= 1)
        assert f"cannot create the index folder {blocker / 'index'}" in message
        assert "Set `index_dir` to a folder you can write to" in message
        assert (await request(client, "codecite/status", {}))["roots"] == []
    finally:
        await client.shutdown_session()
        await client.stop()
