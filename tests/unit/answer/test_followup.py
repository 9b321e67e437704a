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

from codecite_lsp.answer.followup import (
    MAX_TURNS,
    Turn,
    continues,
    offline_standalone,
    standalone,
)
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
    return any(r.chunk.path == path and line in r.chunk.text for r in selected)


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
    model = Config(index_dir=config.index_dir, model=MODEL, support_check="off")
    answerer = Answerer(repo, model, replies=MockReplies([rewritten, json.dumps(reply)]))
    stages: list[str] = []
    turns = [Turn("How does Session.send work?", {"status": "refused"})]
    answer = answerer.ask("What does it do with the reply?", history=turns, stage=stages.append)
    assert isinstance(answer, Answered), answer
    assert stages == [
        "rewriting the follow-up question",
        "retrieving",
        "asking the model",
        "verifying citations",
    ]
    # the history keeps what the user asked, not the rewrite
    assert answerer.history.entries(1)[0].question == "What does it do with the reply?"


def _calls_cited(answer: Any, path: str, line: str) -> bool:
    return any(
        c.path == path and line in c.quote
        for span in getattr(answer, "spans", [])
        if span.kind == "claim"
        for c in span.citations
    )


def test_where_is_that_called_answers_with_call_sites(
    requests_repo: tuple[Path, Config],
) -> None:
    """The answer (not only retrieval) quotes the call: before, it quoted the same chunks as the
    previous answer (the definition, a docstring mentioning the word "called")."""
    repo, config = requests_repo
    answerer = Answerer(repo, config)
    landed = 0
    for first, follow_up, path, line in CONVERSATIONS:
        turns = [Turn(first, answerer.ask(first).model_dump(mode="json"))]
        answer = answerer.ask(follow_up, history=turns)
        assert answer.continued, f"{follow_up!r} after {first!r} continues the conversation"
        landed += _calls_cited(answer, path, line)
    print(f"follow-ups whose answer quotes the call site: {landed}/5")
    assert landed >= 4


def test_a_question_sharing_nothing_with_the_conversation_starts_a_new_one(
    requests_repo: tuple[Path, Config],
) -> None:
    repo, config = requests_repo
    answerer = Answerer(repo, config)
    first = "How does should_bypass_proxies decide?"
    turns = [Turn(first, answerer.ask(first).model_dump(mode="json"))]
    unrelated = "What does get_netrc_auth do?"
    after = answerer.ask(unrelated, history=turns)
    alone = answerer.ask(unrelated)
    assert not after.continued
    assert after.model_dump(exclude={"trace_id"}) == alone.model_dump(exclude={"trace_id"})


def test_the_sample_conversation_lands_on_the_call_and_a_new_topic_stands_alone(
    repo: Path, tmp_path: Path
) -> None:
    config = Config(index_dir=str(tmp_path / "index"), model="extractive", embedding="none")
    Indexer(repo, config).run()
    answerer = Answerer(repo, config)
    first = "What does the sign function do?"
    turns = [Turn(first, answerer.ask(first).model_dump(mode="json"))]
    called = answerer.ask("Where is that called?", history=turns)
    assert isinstance(called, Answered) and called.continued
    quoted = [c for span in called.spans if span.kind == "claim" for c in span.citations]
    assert quoted and all("sign(secret" in c.quote for c in quoted), quoted
    assert all(not c.quote.startswith("def sign") for c in quoted)
    fresh = answerer.ask("How are API keys rotated?", history=turns)
    assert not fresh.continued


@pytest.mark.parametrize(
    ("question", "follows"),
    [
        ("What does invoke_without_command do?", False),  # the issue's: nothing in common
        ("How are tokens verified?", False),
        ("Where is that called?", True),
        ("Who calls consume_value?", True),  # names the cited symbol
        ("and the tests?", True),
        ("Why?", True),  # no subject of its own
    ],
)
def test_a_question_continues_only_what_it_refers_to(question: str, follows: bool) -> None:
    turns = [
        Turn(
            "What does consume_value do?",
            _answer(("src/click/core.py", "def consume_value(self, ctx):")),
        )
    ]
    assert continues(question, turns) is follows


def test_offline_rule_reads_past_a_follow_up_that_named_nothing() -> None:
    # "what fields does it have?" after "where is that class defined?": the class is named only
    # in the turn before, so its terms are what the question is about.
    turns = [
        Turn("how does the token bucket refill?", _answer(("ratelimit.py", "refill_per_second"))),
        Turn("where is that class defined?", _answer(("ratelimit.py", "refill_per_second"))),
    ]
    assert offline_standalone("what fields does it have?", turns) == (
        "what fields does it have? defined token bucket refill"
    )
