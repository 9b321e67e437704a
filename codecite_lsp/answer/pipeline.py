"""The answering pipeline: retrieve, check the floor, prompt, model, citation gate, one stricter
retry, refuse; with ``support_check = "model"`` (the default with a model), a second model
call judging each verified claim against its lines (support_check.py; a first reply that lost
claims to it is retried once, attempts.py): streamed (``on_spans``),
each claim is judged alone as it verifies (partial.py). Every request gets a trace id and one
trace record; answers go to the history.

Nothing unverified reaches the user: the model is not even asked when retrieval found nothing
that clears the relevance floor, and after the retry (attempts.py) only verified claims are shown.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import wording
from ..core.answers import Answered, RefusalReason, Refused, RetrievedRef
from ..core.config import Config
from ..core.limits import MAX_QUESTION_CHARS
from ..core.records import Result, Source, sources_from_results
from ..offline.evidence import OFFLINE_FLOOR, Evidence, gather
from ..retrieve.on_disk import index_differs
from ..verify.gate import AnswerSpan
from .attempts import Check, ModelText, converse
from .followup import Turn, callers_asked, callers_question, continues, recent, standalone
from .history import History
from .llm import (
    Listener,
    MockReplies,
    ModelError,
    ModelReply,
    complete,
    mock_replies_from_env,
    supports_tools,
)
from .partial import Checks, OnSpans, Shown
from .prompt import RESPONSE_SCHEMA, build_messages
from .request import Request
from .support_check import SCHEMA as SUPPORT_SCHEMA
from .support_check import Ask, Checked
from .support_check import check as check_support
from .tool_loop import Budget, Explored, Messages, Tools, explore
from .trace import TraceLog, untrusted_sources

if TYPE_CHECKING:
    from ..retrieve.retriever import RetrievalContext, Retriever

EXTRACTIVE = "extractive"
TOP_RETRIEVED = 5  # places listed with a refusal


def _offline_refusal(evidence: Evidence) -> str:
    if not evidence.answers:
        return wording.OFFLINE_WEAK_EVIDENCE.format(
            share=f"{evidence.relevance:.0%}", floor=f"{OFFLINE_FLOOR:.0%}"
        )
    return wording.OFFLINE_FOUND_NOTHING


def offline_note() -> str:
    """What an offline answer is, and how to have a model explain instead: a local Ollama
    server's models when one runs."""
    from .local_models import local_models

    found = local_models().models
    if not found:
        return wording.OFFLINE_NOTE
    shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    return f"{wording.OFFLINE_NOTE} {wording.OFFLINE_LOCAL.format(models=shown, first=found[0])}"


def _refs(results: list[Result]) -> list[RetrievedRef]:
    """A refusal's closest places: the best by the score shown, in its order (retrieval's
    order is the rerank's, which that score does not follow); equals keep retrieval's."""
    best = sorted(results, key=lambda r: -r.score)[:TOP_RETRIEVED]
    return [
        RetrievedRef(
            path=r.chunk.path,
            start_line=r.chunk.start_line,
            end_line=r.chunk.end_line,
            score=r.score,
        )
        for r in best
    ]


def _context_note(context: RetrievalContext | None) -> str | None:
    if context is None or not (context.path or context.symbol):
        return None
    where = f"the file {context.path}" if context.path else "the editor"
    return where + (f", at the symbol {context.symbol}" if context.symbol else "")


def retrieval_context(context: object) -> RetrievalContext | None:
    """The editor context as the retriever wants it; the LSP session passes a plain dict."""
    from ..retrieve.retriever import RetrievalContext

    if context is None or isinstance(context, RetrievalContext):
        return context
    if isinstance(context, Mapping):
        path, symbol = context.get("path"), context.get("symbol")
        return RetrievalContext(
            path=path if isinstance(path, str) else None,
            symbol=symbol if isinstance(symbol, str) else None,
        )
    raise TypeError(f"unsupported question context: {type(context).__name__}")


class Answerer:
    """Answers questions about one repository. Thread-safe for concurrent ``ask`` calls."""

    def __init__(
        self,
        repo: Path,
        config: Config,
        retriever: Retriever | None = None,
        history: History | None = None,
        trace: TraceLog | None = None,
        replies: MockReplies | None = None,
        in_memory: bool = False,
    ) -> None:
        self.repo = repo
        self.config = config
        self.in_memory = in_memory  # open_retriever's: a long-lived process keeps the index view
        index_dir = config.resolved_index_dir(repo)
        self._retriever = retriever
        self._lock = threading.Lock()
        self.history = history if history is not None else History(index_dir)
        self.trace = trace if trace is not None else TraceLog(index_dir)
        # Testing aid (see llm.py): scripted replies through litellm's mock_response.
        self.replies = replies if replies is not None else mock_replies_from_env()

    @property
    def retriever(self) -> Retriever:
        with self._lock:
            if self._retriever is None:
                from ..retrieve.retriever import open_retriever

                self._retriever = open_retriever(self.repo, self.config, self.in_memory)
            return self._retriever

    def ask(
        self,
        question: str,
        context: RetrievalContext | Mapping[str, Any] | None = None,
        cancel: threading.Event | None = None,
        index_note: str | None = None,
        history: Sequence[Turn] = (),
        stage: Callable[[str], None] | None = None,
        tools: Tools | None = None,
        on_spans: OnSpans | None = None,
    ) -> Answered | Refused:
        """Answer with verified citations, or refuse; raises ValueError for an empty question.

        ``history`` holds the conversation's earlier turns: retrieval searches for the standalone
        question built from them (followup.py). ``stage`` hears each step as it starts.
        ``tools``: the root's loop tools (tool_loop.py), used when the model can call them.
        ``on_spans``: the model's answers are streamed, and each attempt's snapshot of verified
        spans handed to it as it grows (partial.py); the answer returned is the same."""
        question = question.strip()
        if not question:
            raise ValueError("the question is empty")
        notes = [index_note] if index_note else []
        if len(question) > MAX_QUESTION_CHARS:
            question = question[:MAX_QUESTION_CHARS]
            notes.append(f"the question was cut to its first {MAX_QUESTION_CHARS} characters")
        request = Request(uuid.uuid4().hex, question, self.config.model)
        if stage is not None:
            request.stage = stage
        request.on_spans = on_spans
        if on_spans is not None and self._checks_support():
            request.checks = Checks(self._judge(request, cancel))
        # A question sharing nothing with the conversation starts a new one.
        turns = recent(history)
        continued = continues(question, turns)
        turns = turns if continued else []
        calls = callers_asked(question, turns)
        asked = self._standalone(request, question, turns, cancel, calls)
        try:
            answer = self._answer(
                request, asked, retrieval_context(context), cancel, "; ".join(notes), calls, tools
            )
        finally:
            if request.shown is not None:
                request.shown.close()
            if request.checks is not None:
                request.checks.close()
        if continued:
            answer = answer.model_copy(update={"continued": True})
        self.trace.write(request.record(answer))
        if not (cancel is not None and cancel.is_set()):
            self.history.append(question, answer, context)
        return answer

    def _standalone(
        self,
        request: Request,
        question: str,
        history: Sequence[Turn],
        cancel: threading.Event | None,
        calls: list[str],
    ) -> str:
        if not history:
            return question
        if self.config.model == EXTRACTIVE:
            # The offline answerer quotes lines holding the question's words: "called" is in
            # none of the call sites, the names are.
            return callers_question(calls) if calls else standalone(question, history, None)
        request.stage("rewriting the follow-up question")

        def rewrite(messages: list[dict[str, str]]) -> str:
            request.model_calls += 1
            return self._complete(messages, None, cancel, retries=0).text

        return standalone(question, history, rewrite)

    def _answer(
        self,
        request: Request,
        asked: str,
        context: RetrievalContext | None,
        cancel: threading.Event | None,
        note: str,
        calls: list[str],
        tools: Tools | None = None,
    ) -> Answered | Refused:
        """``calls``: the symbols whose callers the question asks for (followup.callers_asked)."""

        def refuse(reason: RefusalReason, detail: str, near: list[Result]) -> Refused:
            detail = f"{detail} ({note})" if note else detail  # e.g. indexing still running
            return Refused(
                trace_id=request.trace_id, reason=reason, detail=detail, retrieved=_refs(near)
            )

        request.stage("retrieving")
        callers = self.retriever.callers(calls) if calls else None
        if callers is not None and callers.selected:
            retrieval = callers  # "where is that called?": the call sites, not the same chunks
        else:
            retrieval = self.retriever.retrieve(asked, context)
        request.retrieved = [
            # terms: what ranked it (adding up to the rerank score; codecite search --explain)
            {"content_hash": r.chunk.content_hash, "score": r.score, "terms": dict(r.terms)}
            for r in retrieval.selected
        ]
        request.search_left_out = [
            {"rank": left.rank, "content_hash": left.result.chunk.content_hash, "rule": left.rule}
            for left in retrieval.search_left_out
        ]
        near = retrieval.selected or retrieval.candidates
        files = retrieval.on_disk
        if not retrieval.selected and files is not None and files.left:
            return refuse("stale_index", index_differs(files), files.left)
        if not retrieval.cleared_floor or not retrieval.selected:
            return refuse(
                "no_span_in_retrieval",
                wording.NOTHING_RELEVANT,
                retrieval.candidates,
            )
        results, answered = retrieval.selected, None
        if tools is not None and self._loops():
            explored = self._explore(request, asked, results, context, tools, cancel)
            request.tool_loop = explored.record  # what was read, even when the model failed
            if explored.error is not None:  # refused as converse refuses a reply never had
                request.attempts = [{"gate": "not_run", "error": explored.error.kind}]
                return refuse("model_error", explored.error.message, near)
            # Gated against what was retrieved and what the loop read, and only those.
            results, answered = explored.results, explored.reply
        sources = sources_from_results(results)
        request.untrusted = untrusted_sources(sources)
        messages = build_messages(asked, sources, _context_note(context))
        offline = self.config.model == EXTRACTIVE
        evidence = gather(asked, retrieval.selected)
        replies = [answered] if answered is not None else []  # the loop's answer: the first reply
        verdict = converse(
            messages,
            sources,
            lambda sent: self._reply(request, asked, sent, sources, evidence, cancel, replies),
            # The offline answerer is deterministic: asking it again would repeat its reply.
            tries=1 if offline else 2,
            nothing_found=_offline_refusal(evidence) if offline else wording.MODEL_FOUND_NOTHING,
            question=asked,
            wording=not self._checks_support(),
            check=self._support_check(request, sources, cancel),
        )
        request.attempts = verdict.attempts
        request.statements_removed = verdict.removed
        if verdict.status == "answered":
            spans, unsupported = verdict.spans, None
            checked = verdict.checked
            if checked is not None:
                request.support_check = checked.record
                if checked.record["status"] == "failed_closed":
                    error = checked.record["error"]
                    return refuse(
                        "unverified_citation", wording.UNCHECKED.format(error=error), near
                    )
                if checked.removed and not checked.claims_left:
                    return refuse("unverified_citation", wording.NONE_SUPPORTED, near)
                spans = checked.spans
                unsupported = wording.unsupported_note(checked.removed) if checked.removed else None
            # Offline, what the answer is comes first: the reader must not take it for an
            # explanation.
            first = offline_note() if offline else None
            notes = [part for part in (first, verdict.note, unsupported, note) if part]
            return Answered(trace_id=request.trace_id, spans=spans, note=" ".join(notes) or None)
        assert verdict.reason is not None
        return refuse(verdict.reason, verdict.detail, near)

    def _reply(
        self,
        request: Request,
        asked: str,
        messages: list[dict[str, str]],
        sources: list[Source],
        evidence: Evidence,
        cancel: threading.Event | None,
        replies: list[ModelReply],
    ) -> ModelText:
        """The model's raw reply; ``extractive`` quotes the best lines without any model.
        ``replies``: one the tool loop already has, taken first."""
        if cancel is not None and cancel.is_set():
            raise ModelError("cancelled", "the request was cancelled")
        if replies:
            request.attempts_made += 1
            request.stage("verifying citations")
            loop_reply = replies.pop()
            return ModelText(loop_reply.text, loop_reply.mode)
        if self.config.model == EXTRACTIVE:
            from ..offline.extractive import answer

            request.model_calls += 1
            request.stage("answering offline")
            text = ModelText(answer(asked, sources, evidence), "offline")
            request.stage("verifying citations")
            return text
        request.stage(
            "retrying with stricter instructions" if request.attempts_made else "asking the model"
        )
        request.attempts_made += 1
        shown = self._shown(request, request.attempts_made, sources, asked)
        retries = self.config.model_retries
        reply = self._call(request, messages, RESPONSE_SCHEMA, cancel, retries, listener=shown)
        request.stage("verifying citations")
        return ModelText(reply.text, reply.mode)

    def _explore(
        self,
        request: Request,
        asked: str,
        results: list[Result],
        context: RetrievalContext | None,
        tools: Tools,
        cancel: threading.Event | None,
    ) -> Explored:
        """The tool loop from the retrieved results; each call may take the seconds left."""

        def call(
            sent: Messages, offered: list[dict[str, Any]], left: float, read: list[Result]
        ) -> ModelReply:
            timeout = min(self.config.model_timeout, max(left, 0.1))
            retries = self.config.model_retries
            # The loop's answer is the first attempt, gated against what was read so far.
            shown = self._shown(request, 1, sources_from_results(read), asked)
            return self._call(
                request, sent, RESPONSE_SCHEMA, cancel, retries, offered, timeout, shown
            )

        budget = Budget.of(self.config)
        note = _context_note(context)
        native = self.config.tool_loop == "on" or supports_tools(self.config.model)
        return explore(
            asked,
            results,
            note,
            tools,
            call,
            budget,
            cancel=cancel,
            stage=request.stage,
            native=native,
        )

    def _shown(
        self, request: Request, attempt: int, sources: list[Source], asked: str
    ) -> Shown | None:
        """The streamed attempt's listener, when the caller wants partial results. With the
        model's support check on, a claim waits for its own verdict (request.checks)."""
        if request.on_spans is None:
            return None
        if request.shown is not None:
            request.shown.close()
        request.shown = Shown(attempt, sources, asked, request.on_spans, request.checks)
        return request.shown

    def _support_check(
        self, request: Request, sources: list[Source], cancel: threading.Event | None
    ) -> Check | None:
        """The model's support check of a verified reply's claims, when it runs."""
        if not self._checks_support():
            return None
        judge = self._judge(request, cancel)

        def check(spans: list[AnswerSpan]) -> Checked:
            request.stage("checking each claim against its lines")
            # Streamed: the verdicts each claim had as it verified, one call for the rest.
            if request.checks is not None:
                return request.checks.check(spans, sources)
            return check_support(spans, sources, judge)

        return check

    def _judge(self, request: Request, cancel: threading.Event | None) -> Ask:
        """The support check's model call: no transient retries, since a failure only leaves
        the gate's verdict (fails closed)."""

        def ask(sent: Messages) -> str:
            return self._call(request, sent, SUPPORT_SCHEMA, cancel, 0).text

        return ask

    def _checks_support(self) -> bool:
        """Whether the model's support check runs (``support_check``; never offline)."""
        return self.config.model != EXTRACTIVE and self.config.support_check == "model"

    def _loops(self) -> bool:
        """Whether the model may ask for more sources (the ``tool_loop`` setting): through
        tool calling where litellm says it has it (or ``on``), written in its reply otherwise."""
        return self.config.model != EXTRACTIVE and self.config.tool_loop != "off"

    def _call(
        self,
        request: Request,
        messages: Messages,
        schema: dict[str, Any],
        cancel: threading.Event | None,
        retries: int,
        tools: list[dict[str, Any]] | None = None,
        timeout: float | None = None,
        listener: Listener | None = None,
    ) -> ModelReply:
        """One model call, counted in the request's trace (calls, tokens, latency)."""
        try:
            reply = self._complete(messages, schema, cancel, retries, tools, timeout, listener)
        except ModelError as exc:
            with request.lock:
                request.model_calls += exc.attempts
            raise
        with request.lock:
            request.model_calls += reply.attempts
            request.prompt_tokens += reply.prompt_tokens
            request.completion_tokens += reply.completion_tokens
            request.model_latency_ms += reply.latency_ms
        return reply

    def _complete(
        self,
        messages: Messages,
        schema: dict[str, Any] | None,
        cancel: threading.Event | None,
        retries: int,
        tools: list[dict[str, Any]] | None = None,
        timeout: float | None = None,
        listener: Listener | None = None,
    ) -> ModelReply:
        return complete(
            messages,
            self.config.model,
            timeout=self.config.model_timeout if timeout is None else timeout,
            retries=retries,
            schema=schema,
            cancel=cancel,
            mock_response=self.replies,
            api_key=os.environ.get(self.config.api_key_env or "") or None,
            tools=tools,
            listener=listener,
        )
