"""The second pass (support_check = "model", the default with a model): the model judges each
verified claim against its quoted lines; a claim it finds unsupported is removed, and a failed
second pass shows no claim as verified (fails closed). The model is replaced only through
litellm's own ``mock_response``: retrieval, prompt, litellm, gate and trace are real."""

from __future__ import annotations

import json
from pathlib import Path

from answer_helpers import (
    MODEL,
    QUESTION,
    LitellmCalls,
    cite,
    claim,
    last_trace,
    mocked,
    reply,
)

from codecite_lsp.answer import llm
from codecite_lsp.answer.pipeline import Answerer
from codecite_lsp.answer.support_check import verdicts
from codecite_lsp.core import wording
from codecite_lsp.core.answers import Answered, ClaimSpan, Refused
from codecite_lsp.core.config import Config
from codecite_lsp.core.records import Source

# "retired" is in the quoted line: the deterministic check accepts both; only reading the line
# shows that nothing there says the old key is deleted.
TRUE = "The old key's retired_at is set to the rotation time."
FALSE = "Rotation deletes the old key once its retired_at is set."


def _answer(sources: list[Source]) -> str:
    line = cite(sources, "keyvault/keys.py", "old.retired_at = now")
    return reply(claim(TRUE, line), claim(FALSE, line))


def _judged(*entailed: bool) -> str:
    items = [{"claim": n, "entailed": ok} for n, ok in enumerate(entailed, start=1)]
    return json.dumps({"verdicts": items})


def _claims(answer: Answered) -> list[str]:
    return [span.text for span in answer.spans if isinstance(span, ClaimSpan)]


def test_a_claim_the_model_finds_unsupported_is_removed_and_recorded(
    indexed: tuple[Path, Config], sources: list[Source], litellm_calls: LitellmCalls
) -> None:
    # The check removes the false claim; the retry repeats it and it is removed again.
    judged = _judged(True, False)
    answerer = mocked(
        indexed, _answer(sources), judged, _answer(sources), judged, support_check="model"
    )
    answer = answerer.ask(QUESTION)

    assert isinstance(answer, Answered), answer
    assert _claims(answer) == [TRUE]
    assert FALSE not in answer.model_dump_json()
    assert answer.note == wording.unsupported_note(1)
    # The second call saw both claims with the lines they quote, as data.
    second = litellm_calls.calls[1]["messages"]
    sent = json.loads(second[1]["content"])
    assert [c["text"] for c in sent["claims"]] == [TRUE, FALSE]
    assert "old.retired_at = now" in sent["claims"][1]["cited_lines"][0]["text"]
    # ... and the definition those lines are in, which a claim may name as the gate lets it.
    assert "rotate_key" in sent["claims"][1]["cited_lines"][0]["in"]
    # The retry was told which claim its lines do not show, with those lines.
    told = litellm_calls.calls[2]["messages"][-1]["content"]
    assert FALSE[:40] in told and TRUE[:40] not in told
    assert "do not show all it says" in told and "old.retired_at = now" in told
    record = last_trace(answerer.config, indexed[0], answer.trace_id)
    assert record["support_check"] == {"claims": 2, "status": "checked", "unsupported": [2]}
    assert record["model_calls"] == 4


def test_a_true_claim_cited_short_is_kept_once_the_retry_cites_its_lines(
    indexed: tuple[Path, Config], sources: list[Source], litellm_calls: LitellmCalls
) -> None:
    rotated = cite(sources, "keyvault/keys.py", "old.retired_at = now")
    short = claim("Rotation adds the new key to the store.", rotated)
    shown = claim(
        "Rotation adds the new key to the store.",
        cite(sources, "keyvault/keys.py", "store.add(client"),
    )
    first, retry = reply(claim(TRUE, rotated), short), reply(claim(TRUE, rotated), shown)
    answerer = mocked(
        indexed, first, _judged(True, False), retry, _judged(True, True), support_check="model"
    )
    answer = answerer.ask(QUESTION)

    assert isinstance(answer, Answered), answer
    assert _claims(answer) == [TRUE, "Rotation adds the new key to the store."]
    assert answer.note is None  # nothing was removed from what is shown
    record = last_trace(answerer.config, indexed[0], answer.trace_id)
    assert record["support_check"] == {"claims": 2, "status": "checked", "unsupported": []}
    assert len(litellm_calls) == 4


def test_a_retry_that_keeps_fewer_claims_is_not_taken(
    indexed: tuple[Path, Config], sources: list[Source]
) -> None:
    line = cite(sources, "keyvault/keys.py", "old.retired_at = now")
    worse = reply(claim(FALSE, line))
    answerer = mocked(
        indexed,
        _answer(sources),
        _judged(True, False),
        worse,
        _judged(False),
        support_check="model",
    )
    answer = answerer.ask(QUESTION)
    assert isinstance(answer, Answered), answer
    assert _claims(answer) == [TRUE]


def test_a_retry_whose_check_fails_or_whose_model_times_out_leaves_the_first_checked_answer(
    indexed: tuple[Path, Config], sources: list[Source]
) -> None:
    line = cite(sources, "keyvault/keys.py", "old.retired_at = now")
    unchecked = reply(claim(TRUE, line), claim("Rotation sets retired_at.", line))
    for script in [
        (_answer(sources), _judged(True, False), unchecked, "I cannot tell."),
        (_answer(sources), _judged(True, False), "litellm.Timeout"),
    ]:
        answer = mocked(indexed, *script, support_check="model").ask(QUESTION)
        # Never the retry's claims unchecked: the first reply's checked claim, with its note.
        assert isinstance(answer, Answered), (script, answer)
        assert _claims(answer) == [TRUE]
        assert answer.note == wording.unsupported_note(1)


def test_the_answer_is_refused_when_the_model_supports_none_of_its_claims(
    indexed: tuple[Path, Config], sources: list[Source]
) -> None:
    answerer = mocked(indexed, _answer(sources), _judged(False, False), support_check="model")
    answer = answerer.ask(QUESTION)

    assert isinstance(answer, Refused), answer
    assert answer.reason == "unverified_citation"
    assert answer.detail == wording.NONE_SUPPORTED


def test_a_failed_second_pass_shows_no_claim_as_verified(
    indexed: tuple[Path, Config], sources: list[Source]
) -> None:
    for second, error in [
        ("litellm.Timeout", "timeout"),
        ("litellm.InternalServerError", "api_error"),
        ("I think both claims look fine!", "unreadable_reply"),
        (_judged(True), "unreadable_reply"),  # one verdict for two claims
        ('{"verdicts": [{"claim": 1, "entailed": "no"}, {"claim": 2, "entailed": false}]}',
         "unreadable_reply"),
    ]:  # fmt: skip
        answerer = mocked(indexed, _answer(sources), second, support_check="model")
        answer = answerer.ask(QUESTION)

        # Fail closed: no claim was checked, so none is shown.
        assert isinstance(answer, Refused), (second, answer)
        assert answer.reason == "unverified_citation"
        assert answer.detail == wording.UNCHECKED.format(error=error)
        assert TRUE not in answer.model_dump_json() and FALSE not in answer.model_dump_json()
        record = last_trace(answerer.config, indexed[0], answer.trace_id)
        assert record["support_check"] == {"claims": 2, "status": "failed_closed", "error": error}


def test_with_a_model_the_check_is_on_by_default_and_off_turns_it_off(
    indexed: tuple[Path, Config], sources: list[Source], litellm_calls: LitellmCalls
) -> None:
    assert Config().support_check == "model"
    repo, config = indexed
    model_config = Config(index_dir=config.index_dir, model=MODEL, model_retries=1)
    replies = llm.MockReplies([_answer(sources), _judged(True, True)])
    answer = Answerer(repo, model_config, replies=replies).ask(QUESTION)
    assert isinstance(answer, Answered), answer
    assert _claims(answer) == [TRUE, FALSE]
    assert len(litellm_calls) == 2  # one batched call for both claims

    answer = mocked(indexed, _answer(sources), support_check="off").ask(QUESTION)
    assert isinstance(answer, Answered)
    assert _claims(answer) == [TRUE, FALSE]
    assert len(litellm_calls) == 3


def test_a_verdict_list_is_read_only_when_it_judges_every_claim_once() -> None:
    assert verdicts("```json\n" + _judged(True, False) + "\n```", 2) == [True, False]
    shuffled = '{"verdicts": [{"claim": 2, "entailed": false}, {"claim": 1, "entailed": true}]}'
    assert verdicts(shuffled, 2) == [True, False]
    twice = '{"verdicts": [{"claim": 1, "entailed": true}, {"claim": 1, "entailed": false}]}'
    assert verdicts(twice, 2) is None
    assert verdicts('{"verdicts": [{"claim": true, "entailed": true}]}', 1) is None
    assert verdicts("[]", 0) is None
