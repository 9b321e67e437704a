"""Verified streaming, through litellm's own streaming: a custom provider
(``litellm.custom_provider_map``) sends each scripted reply in the chunk sizes hypothesis draws,
and answers the model's support check as a judge would: each claim entailed unless its text
holds the word ``MARKER`` (or, broken, with a reply that is no verdict).

For every chunking: each snapshot holds only spans the final gate verified for that attempt's
reply, in its order (a prefix of them), and with the support check only claims judged entailed
(none when the judge is broken); one attempt's snapshots grow by prefix; and the answer equals
the one given when nothing streams.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from answer_helpers import QUESTION, cite, claim, last_trace, reply, sources_for
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codecite_lsp.answer import llm
from codecite_lsp.answer.partial import WORKERS, Checks
from codecite_lsp.answer.pipeline import Answerer
from codecite_lsp.core.answers import Answered, Citation, ClaimSpan, Refused
from codecite_lsp.core.config import Config
from codecite_lsp.verify.gate import AnswerSpan, GateFailed, GatePassed, verify

PROVIDER = "streamtest"
MARKER = "new"  # a claim holding this word is judged not entailed by its lines


class Chunked:
    """The scripted replies, one per litellm call, and the chunk sizes to stream them in."""

    def __init__(self) -> None:
        self.replies: list[str] = []
        self.sizes: list[int] = [3]
        self.judge_broken = False
        self.judged: list[str] = []  # the claims the support check was asked about

    def judge(self, sent: str) -> str:
        """The support check's reply to the request ``sent``, from the claims it holds."""
        claims = json.loads(sent)["claims"]
        self.judged += [claim["text"] for claim in claims]
        if self.judge_broken:
            return "I cannot tell."
        judged = [{"claim": c["claim"], "entailed": not entailed_not(c["text"])} for c in claims]
        return json.dumps({"verdicts": judged})

    def take(self) -> str:
        return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def pieces(self, text: str) -> Iterator[str]:
        at = number = 0
        while at < len(text):
            size = self.sizes[number % len(self.sizes)]
            yield text[at : at + size]
            at, number = at + size, number + 1


@pytest.fixture(scope="module")
def script() -> Iterator[Chunked]:
    from litellm import CustomLLM, ModelResponse

    litellm = llm._litellm()
    chunked = Chunked()

    class Provider(CustomLLM):  # type: ignore[misc]
        def completion(self, *args: Any, **kwargs: Any) -> ModelResponse:
            sent = str(kwargs["messages"][-1]["content"])
            text = chunked.judge(sent) if '"cited_lines"' in sent else chunked.take()
            message = {"role": "assistant", "content": text}
            return ModelResponse(choices=[{"message": message}])

        def streaming(self, *args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
            for piece in chunked.pieces(chunked.take()):
                yield {"text": piece, "is_finished": False, "finish_reason": "", "usage": None}
            yield {"text": "", "is_finished": True, "finish_reason": "stop", "usage": None}

    saved = litellm.custom_provider_map
    litellm.custom_provider_map = [*saved, {"provider": PROVIDER, "custom_handler": Provider()}]
    yield chunked
    litellm.custom_provider_map = saved


def entailed_not(text: str) -> bool:
    return MARKER in text.split()


def _replies(indexed: tuple[Path, Config], name: str) -> list[str]:
    sources = sources_for(Answerer(*indexed), QUESTION)
    retired = claim("The old key is retired.", cite(sources, "keyvault/keys.py", "old.retired_at"))
    added = claim("The new key is added.", cite(sources, "keyvault/keys.py", "store.add(client"))
    vault = {**cite(sources, "keyvault/keys.py", "old.retired_at"), "quote": "vault.store(key)"}
    failing = claim("Keys are stored in Vault.", vault)
    framing = {"kind": "prose", "text": "Here is how it works:"}
    fact = {"kind": "prose", "text": "Keys are rotated by rotate_key."}
    passing = reply(framing, retired, added)
    return {
        "passing": [passing],
        "failing_then_retry": [reply(retired, failing), reply(framing, retired, added)],
        "partly_removed": [reply(retired, failing, added)] * 2,
        "prose_fails_alone": [reply(framing, fact, retired, added)],
        "count_words": [reply({"kind": "prose", "text": "There are two steps:"}, retired, added)],
        "count_wrong": [reply({"kind": "prose", "text": "In three steps:"}, retired, framing)],
        "fenced": [f"Here is the answer:\n```json\n{passing}\n```\nThat is all."],
        "cut_out_of_words": [f"The answer: {passing} (done)"],
        "support_check": [passing, passing],  # the retry, told of its removed claim, repeats
        "support_check_retry": [reply(retired, failing), reply(framing, retired, added)],
        "support_check_count": [reply({"kind": "prose", "text": "There are two steps:"}, retired,
                                      added)],
        "support_check_broken": [passing],
    }[name]  # fmt: skip


def _answerer(indexed: tuple[Path, Config], support_check: str = "off") -> Answerer:
    repo, config = indexed
    model = Config(
        index_dir=config.index_dir,
        model=f"{PROVIDER}/chunked",
        model_retries=0,
        support_check=support_check,
        tool_loop="off",
    )
    return Answerer(repo, model)


def _shown(answer: Answered | Refused) -> dict[str, Any]:
    return answer.model_dump(mode="json", exclude={"trace_id"})


SCENARIOS = [
    "passing",
    "failing_then_retry",
    "partly_removed",
    "prose_fails_alone",
    "count_words",
    "count_wrong",
    "fenced",
    "cut_out_of_words",
    "support_check",
    "support_check_retry",
    "support_check_count",
    "support_check_broken",
]
_unstreamed: dict[str, dict[str, Any]] = {}


@pytest.mark.parametrize("name", SCENARIOS)
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sizes=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=8))
def test_snapshots_hold_only_verified_spans_and_the_answer_is_unchanged(
    indexed: tuple[Path, Config], script: Chunked, name: str, sizes: list[int]
) -> None:
    replies = _replies(indexed, name)
    check = "model" if name.startswith("support_check") else "off"
    script.judge_broken = name == "support_check_broken"
    if name not in _unstreamed:
        script.replies = list(replies)
        _unstreamed[name] = _shown(_answerer(indexed, check).ask(QUESTION))
    script.replies, script.sizes = list(replies), sizes
    snapshots: list[tuple[int, list[AnswerSpan]]] = []
    answer = _answerer(indexed, check).ask(QUESTION, on_spans=lambda n, s: snapshots.append((n, s)))

    assert _shown(answer) == _unstreamed[name]
    if script.judge_broken:
        assert isinstance(answer, Refused) and answer.reason == "unverified_citation"
    sources = sources_for(Answerer(*indexed), QUESTION)
    previous: dict[int, list[AnswerSpan]] = {}
    for attempt, spans in snapshots:
        result = verify(replies[attempt - 1], sources, QUESTION)
        assert isinstance(result, GatePassed | GateFailed)
        verified = result.spans if isinstance(result, GatePassed) else result.kept
        if check == "model":  # a claim is shown once judged entailed, and only then
            verified = [s for s in verified if not _claim_with(s, script.judge_broken)]
        assert spans == verified[: len(spans)], (attempt, spans)
        earlier = previous.get(attempt, [])
        assert len(spans) > len(earlier) and spans[: len(earlier)] == earlier
        assert all(later not in previous for later in range(attempt + 1, 3))  # 2 replaces 1
        previous[attempt] = spans


def _claim_with(span: AnswerSpan, broken: bool) -> bool:
    """A claim the judge does not find entailed (any claim when it is broken)."""
    return isinstance(span, ClaimSpan) and (broken or entailed_not(span.text))


def test_what_each_reply_shows(indexed: tuple[Path, Config], script: Chunked) -> None:
    """The snapshots of a few replies, in words: claim by claim; nothing before a count is
    decided; a failed claim is left out and the rest goes on; nothing from a reply cut out of
    words."""

    def kinds(name: str) -> list[tuple[int, list[str]]]:
        script.replies, script.sizes = _replies(indexed, name), [7]
        check = "model" if name.startswith("support_check") else "off"
        script.judge_broken = name == "support_check_broken"
        seen: list[tuple[int, list[str]]] = []
        answerer = _answerer(indexed, check)
        answerer.ask(QUESTION, on_spans=lambda n, s: seen.append((n, [x.kind for x in s])))
        return seen

    assert kinds("passing") == [
        (1, ["prose"]),
        (1, ["prose", "claim"]),
        (1, ["prose", "claim", "claim"]),
    ]
    assert kinds("fenced") == kinds("passing")
    assert kinds("count_words") == []
    both = [["claim"], ["claim", "claim"]]
    assert kinds("partly_removed") == [(1, spans) for spans in both] + [(2, s) for s in both]
    assert kinds("failing_then_retry")[0] == (1, ["claim"])
    assert kinds("failing_then_retry")[-1] == (2, ["prose", "claim", "claim"])
    assert kinds("cut_out_of_words") == []
    # Each claim as its own verdict comes; the one not entailed never, the answer without it.
    # The removed claim is sent back once; the retry, the same, shows the same.
    assert kinds("support_check") == [
        (n, spans) for n in (1, 2) for spans in (["prose"], ["prose", "claim"])
    ]
    assert kinds("support_check_broken") == [(1, ["prose"])]


def test_each_claim_is_judged_once_as_it_verifies(
    indexed: tuple[Path, Config], script: Chunked
) -> None:
    """Streamed, a claim is judged alone as the preview verifies it, and the answer takes that
    verdict (the retry's identical claim too); a claim decided only at the reply's end (after a
    count) is judged with the rest in one call. The trace says how, and how many calls."""

    def ask(name: str) -> tuple[list[str], dict[str, Any]]:
        script.replies, script.sizes, script.judge_broken = _replies(indexed, name), [5], False
        script.judged = []
        answerer = _answerer(indexed, "model")
        answer = answerer.ask(QUESTION, on_spans=lambda n, s: None)
        record = last_trace(answerer.config, indexed[0], answer.trace_id)
        return sorted(script.judged), record["support_check"]

    both = ["The new key is added.", "The old key is retired."]
    judged, record = ask("support_check")
    assert judged == both
    assert record == {"claims": 2, "status": "checked", "unsupported": [2],
                      "mode": "per_claim", "calls": 2}  # fmt: skip
    judged, record = ask("support_check_retry")  # attempt 1 judged the retired key already
    assert judged == both
    assert record["calls"] == 2 and record["unsupported"] == [2]
    judged, record = ask("support_check_count")  # both wait for the count: one call at the end
    assert judged == both
    assert record["calls"] == 1 and record["unsupported"] == [2]


def test_at_most_four_checks_run_at_once_and_closing_drops_the_rest() -> None:
    """The claims' checks run on a pool of ``WORKERS``; a claim is asked about once; closing
    (the answer given, or the request cancelled) drops the checks not started."""
    release, lock = threading.Event(), threading.Lock()
    running = most = 0

    def ask(sent: list[dict[str, str]]) -> str:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        release.wait(10)
        with lock:
            running -= 1
        return json.dumps({"verdicts": [{"claim": 1, "entailed": True}]})

    def claim_at(line: int) -> ClaimSpan:
        citation = Citation(path="a.py", start_line=line, end_line=line, quote="x = 1",
                            content_hash="h", revision="r")  # fmt: skip
        return ClaimSpan(text=f"Claim {line}.", citations=[citation])

    checks = Checks(ask)
    claims = [claim_at(line) for line in range(1, WORKERS + 3)]
    futures = [checks.start(claim, []) for claim in claims]
    assert checks.start(claims[0], []) is futures[0]
    for _ in range(500):
        if running == WORKERS:
            break
        time.sleep(0.01)
    checks.close()
    release.set()
    assert [future.result() for future in futures[:WORKERS]] == [True] * WORKERS
    assert all(future.cancelled() for future in futures[WORKERS:])
    assert most == WORKERS
