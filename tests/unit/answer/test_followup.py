"""Follow-up questions: the standalone question built from the conversation (pure rules), and five
scripted conversations over a real repository (the installed ``requests`` package's source) where
the follow-up ("where is it called?") needs the previous turn to find the right code."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from answer_helpers import MODEL, cite, sources_for

from codecite_lsp.answer.followup import MAX_TURNS, Turn, offline_standalone, standalone
from codecite_lsp.answer.llm import MockReplies
from codecite_lsp.answer.pipeline import Answerer
from codecite_lsp.core.answers import Answered
from codecite_lsp.core.config import Config
from codecite_lsp.index.indexer import Indexer


def _answer(*quotes: tuple[str, str]) -> dict[str, Any]:
    citations = [{"path": path, "quote": quote} for path, quote in quotes]
    return {"status": "answered", "spans": [{"kind": "claim", "text": "x", "citations": citations}]}


def test_offline_rule_adds_the_previous_terms_and_the_symbols_its_citations_define() -> None:
    turns = [Turn("How does Session.send work?", _answer(("sessions.py", "def send(self, req):")))]
    assert offline_standalone("Where is it called?", turns) == ("Where is it called? Session send")


def test_offline_rule_uses_only_the_last_turn_and_skips_words_already_asked() -> None:
    turns = [
        Turn("What does rotate_key do?", _answer(("keys.py", "def rotate_key():"))),
        Turn("And revoke_token?", {"status": "refused", "retrieved": [{"path": "tokens.py"}]}),
    ]
    assert offline_standalone("Who calls it?", turns) == "Who calls it? revoke_token"


def test_offline_a_question_that_names_its_own_subject_stands_alone() -> None:
    turns = [Turn("How does Session.send work?", _answer(("sessions.py", "def send(self):")))]
    question = "How are retries configured in HTTPAdapter?"
    assert offline_standalone(question, turns) == question


def test_a_forged_or_malformed_answer_is_read_without_failing() -> None:
    odd = {"status": "answered", "spans": ["x", {"citations": [3, {"path": 5, "quote": None}]}]}
    assert offline_standalone("where?", [Turn("What is Retry?", odd)]) == "where? Retry"


def test_only_the_last_few_turns_are_sent_to_the_rewrite() -> None:
    seen: list[str] = []

    def rewrite(messages: list[dict[str, str]]) -> str:
        seen.append(messages[-1]["content"])
        return "Where is Session.send called?"

    turns = [Turn(f"question {n} about thing{n}", {"status": "refused"}) for n in range(10)]
    assert standalone("where is it called?", turns, rewrite) == "Where is Session.send called?"
    assert "thing9" in seen[0] and f"thing{9 - MAX_TURNS}" not in seen[0]


@pytest.mark.parametrize(
    "reply", ["", '{"spans": []}', "x" * 400, RuntimeError("the model service failed")]
)
def test_a_failed_rewrite_falls_back_to_the_offline_rule(reply: Any) -> None:
    def rewrite(_: list[dict[str, str]]) -> str:
        if isinstance(reply, Exception):
            raise reply
        return str(reply)

    turns = [Turn("How does Session.send work?", {"status": "refused"})]
    assert standalone("Where is it called?", turns, rewrite) == ("Where is it called? Session send")


# (first question, follow-up, file of the right code, a line of it)
CONVERSATIONS = [
    ("How does Session.send work?", "Where is it called?", "sessions.py", "self.send(prep"),
    ("What does get_netrc_auth do?", "Where is it used?", "sessions.py", "get_netrc_auth(url)"),
    (
        "How does should_bypass_proxies decide?",
        "Who calls it?",
        "utils.py",
        "if should_bypass_proxies(url, no_proxy=no_proxy)",
    ),
    (
        "What does HTTPAdapter.build_response do?",
        "Where is that called?",
        "adapters.py",
        "return self.build_response(request, resp)",
    ),
    (
        "How is rebuild_auth implemented?",
        "Where is it called from?",
        "sessions.py",
        "self.rebuild_auth(prepared_request, resp)",
    ),
]


@pytest.fixture(scope="module")
def requests_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Config]:
    package = pytest.importorskip("requests")
    tmp = tmp_path_factory.mktemp("followup")
    repo = tmp / "requests"
    shutil.copytree(
        Path(package.__file__).parent, repo, ignore=shutil.ignore_patterns("__pycache__")
    )
    config = Config(index_dir=str(tmp / "index"), model="extractive")
    Indexer(repo, config).run()
    return repo, config


def _found(answerer: Answerer, question: str, path: str, line: str) -> bool:
    selected = answerer.retriever.retrieve(question).selected
    return any(r.path == path and line in r.text for r in selected)


def test_follow_ups_retrieve_the_code_the_previous_turn_was_about(
    requests_repo: tuple[Path, Config],
) -> None:
    repo, config = requests_repo
    answerer = Answerer(repo, config)
    with_history = alone = 0
    for first, follow_up, path, line in CONVERSATIONS:
        turns = [Turn(first, answerer.ask(first).model_dump(mode="json"))]
        with_history += _found(answerer, standalone(follow_up, turns, None), path, line)
        alone += _found(answerer, follow_up, path, line)
        answerer.ask(follow_up, history=turns)  # the whole path runs, citations verified anew
    print(f"follow-ups that retrieved the right code: {with_history}/5 (without history {alone}/5)")
    assert with_history >= 4
    assert alone <= 1  # the follow-up alone does not say what "it" is


def test_with_a_model_the_rewritten_question_drives_retrieval(
    requests_repo: tuple[Path, Config], tmp_path: Path
) -> None:
    repo, config = requests_repo
    rewritten = "Where is Session.send called in Session.request?"
    probe = Answerer(repo, config)
    reply = {
        "spans": [
            {
                "kind": "claim",
                "text": "Session.request sends the prepared request.",
                "citations": [cite(sources_for(probe, rewritten), "sessions.py", "self.send(prep")],
            }
        ]
    }
    model = Config(index_dir=config.index_dir, model=MODEL)
    answerer = Answerer(repo, model, replies=MockReplies([rewritten, json.dumps(reply)]))
    stages: list[str] = []
    turns = [Turn("How does Session.send work?", {"status": "refused"})]
    answer = answerer.ask("Where is it called?", history=turns, stage=stages.append)
    assert isinstance(answer, Answered), answer
    assert stages == [
        "rewriting the follow-up question",
        "retrieving",
        "asking the model",
        "verifying citations",
    ]
    # the history keeps what the user asked, not the rewrite
    assert answerer.history.entries(1)[0].question == "Where is it called?"
