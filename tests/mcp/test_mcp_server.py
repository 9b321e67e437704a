"""`codecite mcp` driven by the SDK's own stdio client, as Claude Code, Cursor or VS Code would."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from answer_helpers import LOOP_QUESTION, MODEL, copy_loop_repo, one_claim, tool_calls
from mcp_session import call, call_error, connect, dumps, text_of, wait_indexed

SECRET = "THISISAFAKESECRETDONOTLEAK"  # the value in the sample repository's .env
ROTATE = "    old.retired_at = now"  # keyvault/keys.py line 54
TOOLS = {"search_code", "ask", "verify_citations", "open_citation"}


def cite(path: str, start: int, end: int, quote: str) -> dict[str, object]:
    return {"path": path, "start_line": start, "end_line": end, "quote": quote}


async def test_lists_the_four_tools_with_schemas_for_a_model(repo: Path) -> None:
    async with connect(repo) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(listed) == TOOLS
    for tool in listed.values():
        assert tool.description and len(tool.description) > 80, tool.name  # written for a model
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.input_schema["type"] == "object"
    search = listed["search_code"].input_schema
    assert search["required"] == ["query"]
    assert search["properties"]["limit"]["maximum"] == 50
    verify = listed["verify_citations"].input_schema
    assert verify["properties"]["citations"]["maxItems"] == 50
    item = verify["$defs"]["CitationIn"]
    assert sorted(item["required"]) == ["end_line", "path", "quote", "start_line"]
    assert item["properties"]["start_line"]["minimum"] == 1
    # Results are typed too: an agent's client can check them against this schema.
    assert "results" in (listed["verify_citations"].output_schema or {})["properties"]


SLOW_LANCEDB = """
import importlib.abc, sys, time

class SlowLancedb(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "lancedb":
            time.sleep(6)
        return None

sys.meta_path.insert(0, SlowLancedb())
"""


async def test_a_call_before_the_index_is_open_answers_at_once_with_a_note(
    repo: Path, tmp_path: Path
) -> None:
    # A cold disk: importing lancedb takes seconds (here 6, in the server's opening thread), so
    # both calls below come while the index is still opening, however fast this machine is.
    (tmp_path / "slow").mkdir()
    (tmp_path / "slow" / "sitecustomize.py").write_text(SLOW_LANCEDB)
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    path = os.pathsep.join(filter(None, [str(tmp_path / "slow"), os.environ.get("PYTHONPATH")]))
    async with connect(repo, PYTHONPATH=path) as session:
        # The calls must not wait for the index, and say why they have nothing yet.
        first = await session.call_tool(
            "search_code", {"query": "rotate_key"}, progress_callback=on_progress
        )
        refused = await call(session, "ask", {"question": "How are API keys rotated?"})
        await wait_indexed(session)
        later = await call(session, "search_code", {"query": "rotate_key"})
    assert not first.is_error
    assert first.structured_content["results"] == []
    assert "index" in first.structured_content["note"], first.structured_content
    assert progress and all("codecite" in (message or "") for _, _, message in progress)
    assert (refused["status"], refused["reason"]) == ("refused", "stale_index")
    assert later["note"] is None and later["results"]


async def test_search_finds_a_definition_and_sees_edits(repo: Path) -> None:
    async with connect(repo) as session:
        await wait_indexed(session)
        found = await call(session, "search_code", {"query": "rotate_key", "limit": 5})
        hits = {hit["path"]: hit for hit in found["results"]}
        assert "def rotate_key(" in hits["keyvault/keys.py"]["text"], dumps(found)
        lines = (repo / "keyvault" / "keys.py").read_text().splitlines()
        hit = hits["keyvault/keys.py"]  # the text is exactly the lines it names
        assert hit["text"].splitlines() == lines[hit["start_line"] - 1 : hit["end_line"]]
        # The watcher keeps the index current: a function written after start is found.
        added = repo / "keyvault" / "audit.py"
        added.write_text("def record_audit_trail(event: str) -> None:\n    print(event)\n")
        for _ in range(100):
            found = await call(session, "search_code", {"query": "record_audit_trail"})
            if "keyvault/audit.py" in [hit["path"] for hit in found["results"]]:
                break
            await anyio.sleep(0.2)
        assert "keyvault/audit.py" in [hit["path"] for hit in found["results"]], dumps(found)


async def test_ask_answers_with_verified_citations_and_refuses_off_topic(repo: Path) -> None:
    async with connect(repo) as session:
        await wait_indexed(session)
        answer = await call(session, "ask", {"question": "How are API keys rotated?"})
        off_topic = await call(session, "ask", {"question": "Who painted the Mona Lisa?"})
    assert answer["status"] == "answered", dumps(answer)
    citations = [
        c for span in answer["spans"] if span["kind"] == "claim" for c in span["citations"]
    ]
    assert citations
    for citation in citations:  # every quote really is in the cited lines of the file
        lines = (repo / citation["path"]).read_text().splitlines()
        cited = " ".join(" ".join(lines[citation["start_line"] - 1 : citation["end_line"]]).split())
        assert " ".join(citation["quote"].split()) in cited
    assert off_topic["status"] == "refused", dumps(off_topic)
    assert off_topic["reason"] in ("no_span_in_retrieval", "unverified_citation")


async def test_with_a_configured_model_a_fabricated_quote_never_reaches_the_agent(
    repo: Path,
) -> None:
    # The model (litellm's mock) cites S1 with a quote that is in no file: the gate refuses
    # it, retries once, and the agent gets the refusal with the closest places instead.
    fabricated = {
        "spans": [
            {
                "kind": "claim",
                "text": "Keys are rotated every day.",
                "citations": [
                    {"source": "S1", "start_line": 1, "end_line": 1, "quote": "rotate_daily()"}
                ],
            }
        ],
        "refuse": None,
    }
    model = {"CODECITE_MODEL": "openai/gpt-4o-mini", "CODECITE_MOCK_RESPONSE": dumps(fabricated)}
    async with connect(repo, **model) as session:
        await wait_indexed(session)
        answer = await call(session, "ask", {"question": "How are API keys rotated?"})
    assert (answer["status"], answer["reason"]) == ("refused", "unverified_citation"), answer
    assert "keyvault/keys.py" in [place["path"] for place in answer["retrieved"]]


async def test_verify_citations_against_the_current_files(repo: Path) -> None:
    keys = repo / "keyvault" / "keys.py"
    true_quote = cite("keyvault/keys.py", 54, 54, ROTATE)
    async with connect(repo) as session:
        # No index needed: these answer while the first pass may still run.
        before = await call(session, "verify_citations", {"citations": [true_quote]})
        keys.write_text(keys.read_text().replace("import time\n", "import time\n\n\n# moved\n"))
        fabricated = cite("keyvault/keys.py", 54, 54, "old.delete_forever(store, client)")
        edited = cite(
            "keyvault/keys.py",
            40,
            40,
            "return now - self.current(client).created_at > ROTATION_PERIOD_SECONDS",
        )
        after = await call(
            session, "verify_citations", {"citations": [true_quote, fabricated, edited]}
        )
        escapes = [
            cite("../outside.py", 1, 1, "x"),
            cite("/etc/passwd", 1, 1, "root"),
            cite("keyvault/../../outside.py", 1, 1, "x"),
        ]
        refused = await call(session, "verify_citations", {"citations": escapes})
    assert before["results"][0]["state"] == "verified"
    moved, not_found, stale = after["results"]
    assert (moved["state"], moved["start_line"], moved["end_line"]) == ("moved", 57, 57)
    assert not_found["state"] == "not_found"
    assert not_found["nearest"]["text"] in keys.read_text()  # verbatim lines of the file
    assert stale["state"] == "stale"
    assert stale["nearest"]["text"].strip().startswith("return now - self.current(client)")
    assert [r["state"] for r in refused["results"]] == ["refused"] * 3
    assert all("outside" not in (r["nearest"] or "") for r in refused["results"])


async def test_open_citation_shows_current_lines_with_context(repo: Path) -> None:
    keys = repo / "keyvault" / "keys.py"
    keys.write_text("# a new first line\n" + keys.read_text())
    async with connect(repo) as session:
        opened = await call(
            session, "open_citation", {"citation": cite("keyvault/keys.py", 54, 54, ROTATE)}
        )
        readme = {"path": "README.md", "start_line": 1, "end_line": 1}
        plain = await call(session, "open_citation", {"citation": readme, "context_lines": 0})
    assert (opened["state"], opened["start_line"]) == ("moved", 55)
    assert f"> 55 | {ROTATE}" in opened["excerpt"]
    assert "  52 | " in opened["excerpt"] and "  58 | " in opened["excerpt"]  # 3 lines around
    assert plain["state"] == "unchecked" and plain["excerpt"] == "> 1 | # keyvault"


@pytest.mark.parametrize("tool", ["verify_citations", "open_citation"])
async def test_secret_content_never_comes_back(repo: Path, tool: str) -> None:
    (repo / "env_link.py").symlink_to(repo / ".env")
    (repo / "debug.log").write_text(f"API_SECRET=sk-live-{SECRET}\n")  # git-ignored
    (repo / "log_link.py").symlink_to(repo / "debug.log")  # a code name for an ignored file
    (repo / "settings.py").write_text('GITHUB = "ghp_' + "a1B2x9Qz" * 5 + '"\n')  # a credential
    outside = repo.parent / "outside.py"
    outside.write_text(f"LEAK = '{SECRET}'\n")
    (repo / "outside_link.py").symlink_to(outside)
    paths = [".env", "env_link.py", "debug.log", "log_link.py", "settings.py", "outside_link.py"]
    paths += ["./.env", "keyvault/../.env"]
    quote = f"API_SECRET=sk-live-{SECRET}"
    async with connect(repo) as session:
        replies = []
        for path in paths:
            citation = cite(path, 1, 1, quote)
            if tool == "verify_citations":
                result = await session.call_tool(tool, {"citations": [citation]})
                assert result.structured_content["results"][0]["state"] == "refused", path
            else:
                result = await session.call_tool(tool, {"citation": citation})
                assert result.is_error, path
            replies.append(text_of(result))
        await wait_indexed(session)
        found = await call(session, "search_code", {"query": f"API_SECRET {SECRET}", "limit": 50})
    everything = "\n".join(replies) + dumps(found)
    assert SECRET not in everything
    assert "ghp_" not in everything


async def test_malformed_calls_get_errors_and_the_server_keeps_serving(repo: Path) -> None:
    good = cite("keyvault/keys.py", 54, 54, ROTATE)
    bad_calls: list[tuple[str, object, str]] = [
        ("no_such_tool", {}, "Unknown tool"),
        ("search_code", {}, "query"),
        ("search_code", {"query": 42}, "valid string"),
        ("search_code", {"query": "keys", "limit": "7"}, "valid integer"),
        ("search_code", {"query": "keys", "limit": True}, "valid integer"),
        ("search_code", {"query": "keys", "limit": 0}, "greater than or equal to 1"),
        ("search_code", {"query": "x" * 2_000_000}, "at most 1000 characters"),
        ("search_code", {"query": "   "}, "blank"),
        ("ask", {"question": ["a", "list"]}, "valid string"),
        ("verify_citations", {"citations": "keys.py:1"}, "valid list"),
        ("verify_citations", {"citations": []}, "at least 1 item"),
        ("verify_citations", {"citations": [good] * 51}, "at most 50 items"),
        ("verify_citations", {"citations": [{**good, "end_line": 3}]}, "before start_line"),
        ("verify_citations", {"citations": [{**good, "start_line": -5}]}, "greater than"),
        ("verify_citations", {"citations": [{**good, "quote": "q" * 30_000}]}, "at most 20000"),
        ("verify_citations", {"citations": [{"path": "a.py"}]}, "Field required"),
        ("verify_citations", {"citations": [{**good, "quote": "q" * 20_000}] * 6}, "add up to"),
        ("open_citation", {"citation": cite("keyvault/keys.py", 900, 901, "")}, "does not exist"),
        ("open_citation", {"citation": cite("missing.py", 1, 1, "x")}, "no such file"),
    ]
    async with connect(repo) as session:
        for name, arguments, says in bad_calls:
            message = await call_error(session, name, arguments)
            assert says in message, (name, arguments if len(dumps(arguments)) < 300 else "...")
        checked = await call(session, "verify_citations", {"citations": [good]})
        await wait_indexed(session)
    assert checked["results"][0]["state"] == "verified"


async def test_with_a_model_that_calls_tools_the_agent_gets_what_the_loop_read(
    tmp_path: Path,
) -> None:
    # The same service as the language server's: the mocked model looks up the helper the
    # first retrieval missed, and the answer cites it.
    script = tmp_path / "replies.json"
    script.write_text(
        dumps(
            [
                tool_calls(("definition", {"symbol": "consume_value"})),
                one_claim("S2", 5, "return int(text)", "A setting of digits becomes a number."),
            ]
        )
    )
    repo = copy_loop_repo(tmp_path)
    settings = {"CODECITE_MODEL": MODEL, "CODECITE_EMBEDDING": "none",
                "CODECITE_CONTEXT_CHUNKS": "1", "CODECITE_MOCK_RESPONSE": f"@{script}",
                "CODECITE_SUPPORT_CHECK": "off"}  # fmt: skip
    async with connect(repo, **settings) as session:
        await wait_indexed(session)
        answer = await call(session, "ask", {"question": LOOP_QUESTION})
    assert answer["status"] == "answered", dumps(answer)
    [cited] = [c for span in answer["spans"] for c in span.get("citations", [])]
    assert (cited["path"], cited["start_line"]) == ("settings/values.py", 5)
