"""Each feature is a thin handler: tested here with a fake host and session, no server process."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from record_helpers import result

from codecite_lsp.core.answers import Refused
from codecite_lsp.core.records import Result
from codecite_lsp.lsp import region
from codecite_lsp.lsp.features import ask, citations, hover, search, status
from codecite_lsp.lsp.params import AskParams, HistoryParams, Position, SearchParams
from codecite_lsp.service.errors import SessionError

T = TypeVar("T")


class FakeConfig:
    hover = True
    embedding = "none"


class FakeIndexer:
    def __init__(self) -> None:
        self.pending: set[str] = set()

    def status(self) -> dict[str, Any]:
        return {"files_indexed": 3, "chunks": 7}


class FakeUpkeep:
    """The index's upkeep, without an index: three files indexed, nothing pending."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.index_dir = root / ".codecite"
        self.config = FakeConfig()
        self.indexer = FakeIndexer()
        self.indexing = False
        self.skipped: list[Any] = []

    def note(self) -> str | None:
        return None


class FakeRetriever:
    def __init__(self, calls: list[tuple[str, tuple[Any, ...]]]) -> None:
        self.calls = calls

    def results(self, query: str, limit: int) -> list[Result]:
        self.calls.append(("results", (query, limit)))
        return [result(path, 1, 2, "x = 1") for path in ("a.py", ".env")]


class FakeAnswerer:
    def __init__(self, calls: list[tuple[str, tuple[Any, ...]]]) -> None:
        self.calls = calls

    def ask(self, question: str, context: dict[str, Any] | None, **_: Any) -> Refused:
        self.calls.append(("ask", (question, context)))
        return Refused(reason="no_span_in_retrieval", detail="")


class OnlyEnvIsPrivate:
    """The privacy rules: ``.env`` is a secret, everything else is open."""

    def path_refusal(self, path: str) -> str | None:
        return "not an indexed file" if path == ".env" else None

    file_refusal = path_refusal


class FakeSession:
    """The parts the features and service operations use, with no index behind them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.config = FakeConfig()
        self.index_dir = root / ".codecite"
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.upkeep = FakeUpkeep(root)
        self.retriever = FakeRetriever(self.calls)
        self.answerer = FakeAnswerer(self.calls)

    def privacy(self) -> OnlyEnvIsPrivate:
        return OnlyEnvIsPrivate()


class FakeHost:
    def __init__(self, root: Path, text: str | None = None) -> None:
        self.session = FakeSession(root)
        self.sessions = {root: self.session}
        self.file_links = False
        self.text = text
        self.told: list[str] = []
        self.shown: list[types.ShowDocumentParams] = []
        self.read: list[Path] = []

    def session_for(self, uri: str) -> FakeSession:
        if not uri.startswith(self.session.root.as_uri()):
            raise JsonRpcInvalidParams(f"{uri} is not inside any workspace folder")
        return self.session

    def default_session(self) -> FakeSession:
        return self.session

    def citation_session(self, root: Any, rel: str) -> FakeSession:
        return self.session

    def current_text(self, path: Path) -> str | None:
        self.read.append(path)
        return self.text

    def encoding(self) -> str:
        return "utf-16"

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return fn(*args, cancel=threading.Event())

    def tell(self, message: str, kind: Any = None) -> None:
        self.told.append(message)

    async def show_document_async(self, params: types.ShowDocumentParams) -> None:
        self.shown.append(params)


def test_hover_sends_only_the_region_around_the_cursor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    sent: list[tuple[str, int, int]] = []

    def explain(
        session: Any, path: Path, text: str, line: int, character: int, *_: Any, **__: Any
    ) -> str:
        sent.append((text, line, character))
        return f"**{text.split(chr(10))[line].split()[0]}**"

    monkeypatch.setattr(hover, "explain", explain)
    text = "\n".join(f"name_{n} = {n}" for n in range(100_000))
    host = FakeHost(tmp_path, text)
    params = types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=(tmp_path / "big.py").as_uri()),
        position=types.Position(line=90_000, character=2),
    )
    result = asyncio.run(hover.hover(host, params))  # type: ignore[arg-type]
    assert isinstance(result, types.Hover) and isinstance(result.contents, types.MarkupContent)
    assert result.contents.value == "**name_90000**"
    ((part, line, character),) = sent
    assert len(part) < 3 * region.CONTEXT_CHARS and character == 2
    assert part.split("\n")[line] == "name_90000 = 90000"


def test_hover_outside_every_root_is_empty_not_an_error(tmp_path: Path):
    host = FakeHost(tmp_path / "root", "x = 1\n")
    params = types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=(tmp_path / "else.py").as_uri()),
        position=types.Position(line=0, character=0),
    )
    assert asyncio.run(hover.hover(host, params)) is None  # type: ignore[arg-type]


def test_ask_boosts_the_symbol_at_the_cursor(tmp_path: Path):
    host = FakeHost(tmp_path, "def f():\n    return 1\n\ndef g():\n    return 2\n")
    params = AskParams(question="why?", uri=(tmp_path / "a.py").as_uri(), position=Position(4, 4))
    answer = asyncio.run(ask.ask(host, params))  # type: ignore[arg-type]
    assert answer["status"] == "refused"
    assert host.session.calls == [("ask", ("why?", {"path": "a.py", "symbol": "g"}))]


def test_ask_in_a_private_file_sends_no_symbol(tmp_path: Path):
    host = FakeHost(tmp_path, "API_KEY = 'x'\n")
    params = AskParams(question="why?", uri=(tmp_path / ".env").as_uri(), position=Position(0, 1))
    asyncio.run(ask.ask(host, params))  # type: ignore[arg-type]
    assert host.session.calls == [("ask", ("why?", {"path": ".env"}))]


def test_ask_about_a_file_not_indexed_yet_is_refused_without_the_model(tmp_path: Path):
    host = FakeHost(tmp_path, "x = 1\n")
    host.session.upkeep.indexer.pending = {"new.py"}
    params = AskParams(question="why?", uri=(tmp_path / "new.py").as_uri())
    answer = asyncio.run(ask.ask(host, params))  # type: ignore[arg-type]
    assert (answer["status"], answer["reason"]) == ("refused", "stale_index")
    assert "new.py is not indexed yet" in answer["detail"]
    assert host.session.calls == []


def test_search_returns_results_under_their_key_less_private_files(tmp_path: Path):
    host = FakeHost(tmp_path)
    found = asyncio.run(search.search(host, SearchParams(query="keys", limit=3)))  # type: ignore[arg-type]
    assert [result["path"] for result in found["results"]] == ["a.py"]
    assert host.session.calls == [("results", ("keys", 3))]


def test_history_pages_newest_first(tmp_path: Path):
    from codecite_lsp.answer.history import History
    from codecite_lsp.core.answers import Refused

    for n in range(5):
        History(tmp_path / ".codecite").append(f"q{n}", Refused(reason="ambiguous", detail=""))
    host = FakeHost(tmp_path)
    page = asyncio.run(citations.history(host, HistoryParams(limit=2, offset=1)))  # type: ignore[arg-type]
    assert [entry["question"] for entry in page["entries"]] == ["q3", "q2"]


def test_status_lists_every_root(tmp_path: Path):
    host = FakeHost(tmp_path)
    (root,) = asyncio.run(status.status(host))["roots"]  # type: ignore[arg-type]
    assert (root["root"], root["files_indexed"], root["chunks"]) == (str(tmp_path), 3, 7)
    assert (root["indexing"], root["skipped_count"]) == (False, 0)
    assert root["index_dir"] == str(tmp_path / ".codecite")  # where the index is kept


def test_a_private_citation_opens_nothing_reads_nothing_and_says_why(tmp_path: Path):
    host = FakeHost(tmp_path, "API_KEY = 'x'\n")
    citation = {"path": ".env", "start_line": 1, "end_line": 1, "quote": "API_KEY"}
    citation |= {"content_hash": "h", "revision": "r"}
    resolution = asyncio.run(citations.open_citation(host, citation))  # type: ignore[arg-type]
    assert resolution["state"] == "gone"
    assert host.shown == [] and host.read == []
    assert host.told == ["codecite: the cited lines are gone from .env: not an indexed file"]


def test_a_citation_outside_the_root_is_a_bad_request(tmp_path: Path):
    host = FakeHost(tmp_path / "root")
    with pytest.raises(SessionError, match="outside the workspace folder"):
        asyncio.run(citations.open_citation(host, {"path": "../else.py"}))  # type: ignore[arg-type]


def test_open_citation_needs_a_path(tmp_path: Path):
    with pytest.raises(JsonRpcInvalidParams, match="path must be a string"):
        asyncio.run(citations.open_citation(FakeHost(tmp_path), {"path": 3}))  # type: ignore[arg-type]


def test_nothing_found_while_the_first_pass_runs_says_the_index_is_not_ready(tmp_path: Path):
    host = FakeHost(tmp_path)
    params = AskParams(question="how are keys rotated?")
    assert asyncio.run(ask.ask(host, params))["reason"] == "no_span_in_retrieval"  # type: ignore[arg-type]
    host.session.upkeep.indexing = True
    host.session.upkeep.note = lambda: "indexing is still running"  # type: ignore[method-assign]
    answer = asyncio.run(ask.ask(host, params))  # type: ignore[arg-type]
    assert (answer["reason"], answer["detail"]) == ("stale_index", "indexing is still running")


def test_history_pages_of_several_roots_take_each_roots_share_of_the_merged_order():
    newer, older = ["t9", "t7", "t5", "t3"], ["t8", "t6", "t5", "t1"]
    merged = ["t9", "t8", "t7", "t6", "t5", "t5", "t3", "t1"]  # ties: the first root first
    for offset in range(len(merged) + 1):
        for limit in (1, 3, 8):
            ranges = citations.page_ranges([newer, older], offset, limit)
            page = sorted(
                [
                    t
                    for (skip, take), times in zip(ranges, [newer, older], strict=True)
                    for t in times[skip:][:take]
                ],
                reverse=True,
            )
            assert page == merged[offset : offset + limit]
