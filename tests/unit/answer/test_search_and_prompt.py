"""The prompt's sources come from the ranking search shows, on a real repository: the installed
click's sources, indexed with the defaults. Each of search's first three results for a question
is among the prompt's sources, or the trace names the rule that left it out; a refusal lists its
closest places best first by the score it shows."""

from __future__ import annotations

import shutil
from pathlib import Path

import click
import pytest
from answer_helpers import index_repo, last_trace

from codecite_lsp.answer.pipeline import Answerer
from codecite_lsp.core.answers import Refused
from codecite_lsp.core.config import Config
from codecite_lsp.retrieve.retriever import open_retriever
from codecite_lsp.retrieve.selection import wholly_in

# Written before any ranking was looked at (as a user asks them).
QUESTIONS = [
    "How does click parse command line options into parameter values?",
    "How does click prompt the user for a value when an option is missing?",
    "How does a group decide which subcommand to invoke?",
    "How does click convert a string argument to an integer?",
    "How does click read an option's value from an environment variable?",
    "How does click format the help text of a command?",
    "How does shell completion find the completions for an option?",
    "How does echo strip colors when output is not a terminal?",
    "How does the progress bar render its line?",
    "How does pass_obj hand the context object to the decorated function?",
]
# Rules that may leave one of search's first three out: the budget never does (they keep places).
NOT_BUDGET = {"floor", "non_code_quota", "source_lines", "changed_on_disk", "duplicate_span"}


@pytest.fixture(scope="module")
def clicks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Config]:
    root = tmp_path_factory.mktemp("click")
    repo = root / "repo"
    shutil.copytree(Path(click.__file__).parent, repo / "click")
    return repo, index_repo(repo, root / "idx")


def test_searchs_first_three_are_in_the_prompt_or_the_rule_is_named(
    clicks: tuple[Path, Config],
) -> None:
    repo, config = clicks
    retriever = open_retriever(repo, config)
    shown = 0
    for question in QUESTIONS:
        first = retriever.search(question, config.candidates)[:3]
        found = retriever.retrieve(question)
        left = {left.result.chunk.id: left for left in found.search_left_out}
        for rank, result in enumerate(first, start=1):
            if wholly_in(result, found.selected):
                assert result.chunk.id not in left
                shown += 1
            else:
                assert left[result.chunk.id].rank == rank, question
                assert left[result.chunk.id].rule in NOT_BUDGET, question
    assert shown >= 27  # of 30: the rest named (on click 8.x, one under the floor)


def test_the_trace_records_which_rule_left_each_out(clicks: tuple[Path, Config]) -> None:
    repo, config = clicks
    answerer = Answerer(repo, config)  # the offline answerer: no model
    for question in QUESTIONS[:4]:
        answer = answerer.ask(question)
        record = last_trace(config, repo, answer.trace_id)
        expected = [
            {"rank": left.rank, "content_hash": left.result.chunk.content_hash, "rule": left.rule}
            for left in answerer.retriever.retrieve(question).search_left_out
        ]
        assert record["search_left_out"] == expected


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
