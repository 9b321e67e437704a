"""History: answers stored with content-keyed citations that survive re-indexing and edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from answer_helpers import (
    QUESTION,
    cite,
    claim,
    copy_sample,
    index_repo,
    mocked,
    reply,
    sources_for,
)

from codecite_lsp.answer.history import History, citations_of
from codecite_lsp.answer.pipeline import Answerer
from codecite_lsp.core.answers import Answered, Citation, ClaimSpan, ProseSpan, Refused
from codecite_lsp.core.config import Config


@pytest.fixture
def asked(tmp_path: Path) -> tuple[Path, Config, Answerer, Answered]:
    """A copy of the sample repo, indexed, with one answer citing keys.py and operations.md."""
    repo = copy_sample(tmp_path)
    config = index_repo(repo, tmp_path / "index")
    sources = sources_for(Answerer(repo, config), QUESTION)
    answerer = mocked(
        (repo, config),
        reply(
            claim(
                "The old key is retired, not deleted.",
                cite(sources, "keyvault/keys.py", "old.retired_at = now"),
                cite(sources, "keyvault/keys.py", "The old key is not deleted"),
            ),
            claim("Keys rotate monthly.", cite(sources, "docs/operations.md", "Keys rotate every")),
        ),
    )
    answer = answerer.ask(QUESTION, context={"path": "keyvault/keys.py", "symbol": "rotate_key"})
    assert isinstance(answer, Answered), answer
    return repo, config, answerer, answer


def _states(history: History, repo: Path) -> list[tuple[str, str, int | None]]:
    (entry,) = history.resolved(repo)
    return [
        (c.citation.path, c.resolution.state, getattr(c.resolution, "start_line", None))
        for c in entry.citations
    ]


def test_stored_line_is_content_keyed_without_chunk_ids(
    asked: tuple[Path, Config, Answerer, Answered],
) -> None:
    repo, _, answerer, answer = asked
    (line,) = answerer.history.path.read_text().splitlines()
    stored = json.loads(line)
    assert stored["question"] == QUESTION
    assert stored["context"] == {"path": "keyvault/keys.py", "symbol": "rotate_key"}
    citation = stored["answer"]["spans"][0]["citations"][0]
    assert set(citation) == {
        "path",
        "start_line",
        "end_line",
        "quote",
        "content_hash",
        "revision",
        "start_byte",
        "end_byte",
        "quote_hash",
        "chunk_hash",
    }
    keys_py = (repo / "keyvault/keys.py").read_bytes()
    quoted = keys_py[citation["start_byte"] : citation["end_byte"]].decode()
    assert quoted.strip() == "old.retired_at = now"
    assert answerer.history.entries()[0].answer == answer


def test_citations_survive_reindex_with_another_chunk_budget(
    asked: tuple[Path, Config, Answerer, Answered],
) -> None:
    from codecite_lsp.index.indexer import Indexer

    repo, config, answerer, _ = asked
    before = Indexer(repo, config).run().chunks
    rechunked = Indexer(repo, Config(index_dir=config.index_dir, chunk_budget=300)).run()
    assert rechunked.chunks > before  # the index really was cut differently
    assert all(state == "exact" for _, state, _ in _states(answerer.history, repo))


def test_twenty_lines_inserted_above_moves_every_citation(
    asked: tuple[Path, Config, Answerer, Answered],
) -> None:
    repo, _, answerer, answer = asked
    before = {(c.path, c.start_line) for c in citations_of(answer)}
    for rel in ("keyvault/keys.py", "docs/operations.md"):
        path = repo / rel
        path.write_text("# padding\n" * 20 + path.read_text())

    states = _states(answerer.history, repo)
    assert {state for _, state, _ in states} == {"moved"}
    assert {(path, line - 20) for path, _, line in states if line is not None} == before


def test_deleted_lines_are_stale_and_deleted_file_is_gone(
    asked: tuple[Path, Config, Answerer, Answered],
) -> None:
    repo, _, answerer, _ = asked
    keys = repo / "keyvault/keys.py"
    keys.write_text(
        "\n".join(
            line
            for line in keys.read_text().splitlines()
            if "old.retired_at = now" not in line and "is not deleted" not in line
        )
    )
    (repo / "docs/operations.md").unlink()

    states = {(path, state) for path, state, _ in _states(answerer.history, repo)}
    assert states == {("keyvault/keys.py", "stale"), ("docs/operations.md", "gone")}


def test_unsaved_buffer_text_is_used_for_resolution(
    asked: tuple[Path, Config, Answerer, Answered],
) -> None:
    repo, _, answerer, _ = asked
    buffers = {"keyvault/keys.py": "\n" + (repo / "keyvault/keys.py").read_text()}
    (entry,) = answerer.history.resolved(
        repo, read_text=lambda rel: buffers.get(rel) or (repo / rel).read_text()
    )
    assert [c.resolution.state for c in entry.citations] == ["moved", "moved", "exact"]


def _answer(text: str) -> Answered:
    return Answered(trace_id=text, spans=[ProseSpan(text=text)])


def test_truncated_last_line_is_tolerated_and_next_append_is_intact(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.append("first?", _answer("one"))
    with history.path.open("a") as handle:
        handle.write('{"question": "half a line from a cra')  # a crash mid-write
    assert [e.question for e in history.entries()] == ["first?"]

    history.append("second?", Refused(reason="model_error", detail="down"))
    assert [e.question for e in history.entries()] == ["first?", "second?"]
    assert [e.question for e in History(tmp_path).entries(limit=1)] == ["second?"]


def test_history_of_a_missing_folder_is_empty(tmp_path: Path) -> None:
    assert History(tmp_path / "nothing-here").entries() == []
    assert History(tmp_path / "nothing-here").resolved(tmp_path) == []


def test_citation_without_hash_falls_back_to_the_quote(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    citation = Citation(
        path="a.py", start_line=5, end_line=5, quote="y = 2", content_hash="", revision=""
    )
    history = History(tmp_path / "index")
    history.append("q", Answered(spans=[ClaimSpan(text="y", citations=[citation])]))
    (entry,) = history.resolved(tmp_path)
    assert entry.citations[0].resolution.state == "moved"
