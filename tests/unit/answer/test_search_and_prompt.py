"""Questions on a real repository: the installed click's sources, indexed with the defaults. A
refusal lists its closest places best first by the score it shows."""

from __future__ import annotations

import shutil
from pathlib import Path

import click
import pytest
from answer_helpers import index_repo

from codecite_lsp.answer.pipeline import Answerer
from codecite_lsp.core.answers import Refused
from codecite_lsp.core.config import Config


@pytest.fixture(scope="module")
def clicks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Config]:
    root = tmp_path_factory.mktemp("click")
    repo = root / "repo"
    shutil.copytree(Path(click.__file__).parent, repo / "click")
    return repo, index_repo(repo, root / "idx")


@pytest.mark.parametrize(
    "question",
    [
        "How does the command cache its compiled templates?",  # 0.29 came above 0.40
        "How does click retry a failed network request?",
        "How does click upload files to an S3 bucket?",
    ],
)
def test_a_refusals_closest_places_are_best_first(
    clicks: tuple[Path, Config], question: str
) -> None:
    repo, config = clicks
    answer = Answerer(repo, config).ask(question)
    assert isinstance(answer, Refused)
    scores = [ref.score for ref in answer.retrieved]
    assert scores and scores == sorted(scores, reverse=True)
