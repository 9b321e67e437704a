"""Helpers for the answering tests: a copy of the sample repository, its index, and model replies
written in the model's JSON shape (test_pipeline, test_history, test_trace, test_ask_cli).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from lsp_helpers import FIXTURE as SAMPLE
from lsp_helpers import init_params, wait_indexed
from pytest_lsp import LanguageClient

from codecite_lsp.answer import llm
from codecite_lsp.answer.pipeline import Answerer
from codecite_lsp.answer.trace import TraceLog
from codecite_lsp.core.config import Config
from codecite_lsp.core.records import Source, sources_from_results

MODEL = "openai/gpt-4o-mini"  # litellm knows it supports JSON-schema output
QUESTION = "How are API keys rotated?"


def copy_sample(dest: Path) -> Path:
    repo = dest / "repo"
    shutil.copytree(SAMPLE, repo)
    (repo / "debug.log").write_text("OPENAI_API_KEY=sk-never-index-me\n")  # git-ignored
    return repo


LOOP_REPO = SAMPLE.parent / "loop_repo"  # load_settings calls consume_value, in another file
LOOP_QUESTION = "How does load_settings load the settings?"


def copy_loop_repo(dest: Path) -> Path:
    """The loop's repository, with a git-ignored copy of the helper and a secret file."""
    repo = dest / "repo"
    shutil.copytree(LOOP_REPO, repo)
    (repo / ".gitignore").write_text("build/\n")
    (repo / "build").mkdir()
    (repo / "build/generated.py").write_text("def consume_value(raw):\n    return raw\n")
    (repo / ".env").write_text("API_TOKEN=never-shown\n")
    return repo


@asynccontextmanager
async def loop_session(
    client: LanguageClient, tmp_path: Path, mock: Path, script: list[Any]
) -> AsyncIterator[None]:
    """A server session on the loop's repository, its model's replies ``script`` (written to
    ``mock``, which the server reads through CODECITE_MOCK_RESPONSE). One chunk shown: the first
    retrieval holds load_settings, never consume_value's body."""
    mock.write_text(json.dumps(script))
    repo = copy_loop_repo(tmp_path)
    settings = {"model": MODEL, "embedding": "none", "context_chunks": 1, "model_retries": 0}
    await client.initialize_session(init_params("visual-studio-code", repo, settings))
    await wait_indexed(client)
    try:
        yield
    finally:
        await client.shutdown_session()
        mock.unlink(missing_ok=True)


def tool_calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A scripted reply calling the loop's tools (llm.py hands it to litellm's mock_tool_calls)."""
    return {"tool_calls": [{"function": {"name": n, "arguments": a}} for n, a in calls]}


def one_claim(label: str, line: int, quote: str, text: str) -> dict[str, Any]:
    """A reply object with one claim citing ``quote`` at ``line`` of source ``label``."""
    citation = {"source": label, "start_line": line, "end_line": line, "quote": quote}
    return {"spans": [{"kind": "claim", "text": text, "citations": [citation]}], "refuse": None}


def index_repo(repo: Path, index_dir: Path, **settings: Any) -> Config:
    from codecite_lsp.index.indexer import Indexer

    config = Config(index_dir=str(index_dir), **settings)
    Indexer(repo, config).run()
    return config


def index_files(tmp_path: Path, files: dict[str, str], **settings: Any) -> Config:
    """A repository of ``files`` under ``tmp_path``, indexed keyword only with a small budget."""
    repo = tmp_path / "repo"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    return index_repo(
        repo, tmp_path / "idx", **{"embedding": "none", "chunk_budget": 600, **settings}
    )


def sources_for(answerer: Answerer, question: str) -> list[Source]:
    """The sources the pipeline shows the model for ``question`` (retrieval is deterministic)."""
    return sources_from_results(answerer.retriever.retrieve(question).selected)


def cite(sources: list[Source], path: str, needle: str, shift: int = 0) -> dict[str, Any]:
    """A citation in the model's shape quoting the line of ``path`` that holds ``needle``."""
    for source in sources:
        lines = source.result.chunk.text.split("\n")
        for offset, line in enumerate(lines):
            if source.result.chunk.path == path and needle in line:
                number = source.result.chunk.start_line + offset + shift
                return {
                    "source": source.label,
                    "start_line": number,
                    "end_line": number,
                    "quote": line.strip(),
                }
    raise AssertionError(
        f"{needle!r} of {path} was not retrieved: {[s.result.chunk.path for s in sources]}"
    )


def reply(*spans: dict[str, Any]) -> str:
    return json.dumps({"spans": list(spans), "refuse": None})


def claim(text: str, *citations: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "claim", "text": text, "citations": list(citations)}


class LitellmCalls:
    """Every request litellm was asked to make (a litellm callback: counts mocked calls too)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __len__(self) -> int:
        return len(self.calls)


@pytest.fixture
def litellm_calls() -> Iterator[LitellmCalls]:
    from litellm.integrations.custom_logger import CustomLogger

    litellm = llm._litellm()
    seen = LitellmCalls()

    class Recorder(CustomLogger):  # type: ignore[misc]
        def log_pre_api_call(self, model: str, messages: Any, kwargs: dict[str, Any]) -> None:
            seen.calls.append({"model": model, "messages": messages, "kwargs": kwargs})

    recorder = Recorder()
    litellm.callbacks.append(recorder)
    yield seen
    litellm.callbacks.remove(recorder)


def last_trace(config: Config, repo: Path, trace_id: str) -> dict[str, Any]:
    records = TraceLog(config.resolved_index_dir(repo)).records()
    return next(r for r in records if r["trace_id"] == trace_id)


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Config]:
    base = tmp_path_factory.mktemp("answering")
    repo = copy_sample(base)
    config = index_repo(repo, base / "index")
    return repo, config


def mocked(indexed: tuple[Path, Config], *replies: str, **settings: Any) -> Answerer:
    repo, config = indexed
    # The second pass has its own tests (test_support_check.py): here one scripted reply per answer.
    settings = {"model_retries": 1, "support_check": "off", **settings}
    model_config = Config(index_dir=config.index_dir, model=MODEL, **settings)
    return Answerer(repo, model_config, replies=llm.MockReplies(list(replies)))


@pytest.fixture
def sources(indexed: tuple[Path, Config]) -> list[Source]:
    return sources_for(Answerer(*indexed), QUESTION)
