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

from codecite_lsp.lsp import region
from codecite_lsp.lsp.features import ask, citations, hover, search, status
from codecite_lsp.lsp.params import AskParams, HistoryParams, Position, SearchParams

T = TypeVar("T")


class FakeConfig:
    hover = True


class FakeSession:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.config = FakeConfig()
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def ask(self, question: str, path: Path | None, text: str | None, position: Any, **_: Any):
        self.calls.append(("ask", (question, path, text, position)))
        return {"status": "refused", "reason": "no_span_in_retrieval"}

    def search(self, query: str, limit: int, **_: Any) -> list[dict[str, Any]]:
        self.calls.append(("search", (query, limit)))
        return [{"path": "a.py"}]

    @property
    def index_dir(self) -> Path:
        return self.root / ".codecite"

    def privacy(self) -> Any:
        class Open:
            def file_refusal(self, path: str) -> None:
                return None

        return Open()

    def status(self) -> dict[str, Any]:
        return {"root": str(self.root), "files_indexed": 3}

    def absolute(self, rel: str) -> Path:
        return self.root / rel

    def resolve(self, citation: dict[str, Any], read: Any, **_: Any) -> dict[str, Any]:
        return {"state": "gone", "path": citation["path"], "reason": "not an indexed file"}


class FakeHost:
    def __init__(self, root: Path, text: str | None = None) -> None:
        self.session = FakeSession(root)
        self.sessions = {root: self.session}
        self.text = text
        self.told: list[str] = []
        self.shown: list[types.ShowDocumentParams] = []

    def session_for(self, uri: str) -> FakeSession:
        if not uri.startswith(self.session.root.as_uri()):
            raise JsonRpcInvalidParams(f"{uri} is not inside any workspace folder")
        return self.session

    def default_session(self) -> FakeSession:
        return self.session

    def citation_session(self, root: Any, rel: str) -> FakeSession:
        return self.session

    def current_text(self, path: Path) -> str | None:
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

    def explain(session: Any, path: Path, text: str, line: int, character: int, *_: Any) -> str:
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


def test_ask_passes_the_cursor_region_and_position(tmp_path: Path):
    host = FakeHost(tmp_path, "def f():\n    return 1\n")
    params = AskParams(question="why?", uri=(tmp_path / "a.py").as_uri(), position=Position(1, 4))
    asyncio.run(ask.ask(host, params))  # type: ignore[arg-type]
    ((name, (question, path, text, position)),) = host.session.calls
    assert (name, question, path, text, position) == (
        "ask",
        "why?",
        tmp_path / "a.py",
        "def f():\n    return 1\n",
        (1, 4),
    )


def test_search_returns_results_under_their_key(tmp_path: Path):
    host = FakeHost(tmp_path)
    found = asyncio.run(search.search(host, SearchParams(query="keys", limit=3)))  # type: ignore[arg-type]
    assert found == {"results": [{"path": "a.py"}]}
    assert host.session.calls == [("search", ("keys", 3))]


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
    assert asyncio.run(status.status(host)) == {  # type: ignore[arg-type]
        "roots": [{"root": str(tmp_path), "files_indexed": 3}]
    }


def test_a_gone_citation_opens_nothing_and_says_why(tmp_path: Path):
    host = FakeHost(tmp_path)
    resolution = asyncio.run(citations.open_citation(host, {"path": ".env"}))  # type: ignore[arg-type]
    assert resolution["state"] == "gone"
    assert host.shown == []
    assert host.told == ["codecite: the cited lines are gone from .env: not an indexed file"]


def test_open_citation_needs_a_path(tmp_path: Path):
    with pytest.raises(JsonRpcInvalidParams, match="path must be a string"):
        asyncio.run(citations.open_citation(FakeHost(tmp_path), {"path": 3}))  # type: ignore[arg-type]
