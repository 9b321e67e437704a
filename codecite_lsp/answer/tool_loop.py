"""The bounded tool loop: before it answers, the model may call ``search``, ``read``,
``definition`` and ``callers`` over the index, when the first retrieval missed what it needs
(a helper it sees named, a caller).

Each tool's results become sources labelled after the retrieved ones (S9, S10, ...) and are shown
to the model fenced and numbered as the prompt's are; a refused call (a read outside the
workspace, of a private file, over the round's budget) gets the refusal as its result. The loop
ends when the model replies without calling a tool (that reply is its answer), or when a budget
runs out (rounds, tokens, seconds): the model is then asked to answer from what it has read.
A model without tool calling gets the same tools as a reply shape it writes instead of an
answer (``{"more": {"tool": "search", "arguments": {"query": "..."}}}``, :func:`written_calls`),
and their results as the next user turn. A model that fails mid-loop (an error, its timeout, a
cancel) ends it with that error: the request is refused as without the loop, and the trace still
records the rounds run. Otherwise the answer is gated against the retrieved sources and what
the loop read, and only those (pipeline.py). The tools themselves are the service layer's
(``service/tools.py``): the same index, privacy and secret rules as every other door.
"""

from __future__ import annotations

import json
import posixpath
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core.config import Config
from ..core.records import Result, sources_from_results
from .llm import ModelError, ModelReply, ToolCall
from .prompt import build_messages, tool_sources
from .trace import question_hash

Messages = list[dict[str, Any]]

RESULTS_PER_CALL = 4  # places one search, definition or callers call shows the model
MAX_READ_LINES = 200  # lines one read shows at most

_NOTE = (
    "Tools: when the sources above do not show what the question needs (a function they call, "
    "where something is defined or called), call search(query), read(path, start_line, "
    "end_line), definition(symbol) or callers(symbol). Each result is a new numbered source "
    "you may cite like the others. When you have what you need, reply with the answer object."
)
_WRITTEN_NOTE = (
    "More sources: when the sources above do not show what the question needs (a function they "
    'call, where something is defined or called), reply with only {"more": [{"tool": "search", '
    '"arguments": {"query": "..."}}]} instead of the answer. The tools: search(query), '
    "read(path, start_line, end_line), definition(symbol), callers(symbol). Their results come "
    "back as new numbered sources you may cite like the others. When you have what you need, "
    "reply with the answer object."
)


def _function(name: str, description: str, **properties: str) -> dict[str, Any]:
    kinds = {key: {"type": kind} for key, kind in properties.items()}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": kinds,
                "required": list(properties),
                "additionalProperties": False,
            },
        },
    }


TOOLS: list[dict[str, Any]] = [
    _function("search", "Search the repository's code for a query.", query="string"),
    _function(
        "read",
        f"Read lines of a file (repository-relative path; at most {MAX_READ_LINES} lines).",
        path="string",
        start_line="integer",
        end_line="integer",
    ),
    _function("definition", "Where a function, class or value is defined.", symbol="string"),
    _function("callers", "The lines that call a function.", symbol="string"),
]


class ToolRefused(Exception):
    """The call may not be answered; the message, in plain words, is the tool's result."""


class Tools(Protocol):
    """The loop's tools over one root's index (service/tools.py): each returns places as
    retrieval results, or raises ToolRefused."""

    def search(self, query: str) -> list[Result]: ...

    def read(self, path: str, start_line: int, end_line: int) -> list[Result]: ...

    def definition(self, symbol: str) -> list[Result]: ...

    def callers(self, symbol: str) -> list[Result]: ...


@dataclass(frozen=True)
class Budget:
    """What the loop may spend before the model must answer (the ``tool_*`` settings)."""

    rounds: int
    calls_per_round: int
    tokens: int
    seconds: float

    @classmethod
    def of(cls, config: Config) -> Budget:
        return cls(
            config.tool_rounds, config.tool_calls_per_round, config.tool_tokens, config.tool_seconds
        )


# One model call of the loop: the messages, the tools offered, the seconds it may take, and the
# results read so far (what its reply, if it answers, is gated against: a streamed reply's
# preview checks its spans against them).
Call = Callable[[Messages, list[dict[str, Any]], float, list[Result]], ModelReply]


@dataclass
class Explored:
    """What the loop read, and how it ended."""

    results: list[Result]  # retrieved first, then each tool's new places in the order read
    reply: ModelReply | None = None  # its answer; None: a budget ran out or the model failed
    stopped: str = "answered"  # or "rounds", "tokens", "seconds", "model_error"
    calls: list[dict[str, Any]] = field(default_factory=list)  # one trace record per tool call
    rounds: int = 0
    error: ModelError | None = None  # why the model failed (or the request was cancelled)

    @property
    def record(self) -> dict[str, Any]:
        record = {"rounds": self.rounds, "stopped": self.stopped, "calls": self.calls}
        return record | ({"error": self.error.kind} if self.error is not None else {})


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def step(name: str, arguments: dict[str, Any]) -> str:
    """What progress says while a call runs: "searching `consume_value`", "reading
    core.py:2480-2530"."""
    if name == "read":
        where = posixpath.basename(str(arguments.get("path", "")))
        lines = f"{arguments.get('start_line')}-{arguments.get('end_line')}"
        return f"reading {_short(where)}:{lines}"
    said = _short(str(arguments.get("query" if name == "search" else "symbol", "")))
    if name == "search":
        return f"searching `{said}`"
    if name == "definition":
        return f"looking up the definition of `{said}`"
    return f"finding the callers of `{said}`"


_KINDS = {"integer": "a whole number", "string": "a non-empty string"}


def _arguments(call: ToolCall) -> dict[str, Any]:
    """The call's arguments, checked against its tool's parameters; ToolRefused otherwise."""
    spec = next((t["function"] for t in TOOLS if t["function"]["name"] == call.name), None)
    if spec is None:
        raise ToolRefused(f"there is no tool {call.name!r}")
    try:
        given = json.loads(call.arguments or "{}")
    except ValueError:
        raise ToolRefused("the arguments are not a JSON object") from None
    if not isinstance(given, dict):
        raise ToolRefused("the arguments are not a JSON object")
    for key, kind in spec["parameters"]["properties"].items():
        value = given.get(key)
        wanted = int if kind["type"] == "integer" else str
        if not isinstance(value, wanted) or isinstance(value, bool) or value == "":
            raise ToolRefused(f"{key} must be {_KINDS[kind['type']]}")
    return given


def _run(tools: Tools, name: str, arguments: dict[str, Any]) -> list[Result]:
    if name == "search":
        return tools.search(arguments["query"])[:RESULTS_PER_CALL]
    if name == "read":
        return tools.read(arguments["path"], arguments["start_line"], arguments["end_line"])
    if name == "definition":
        return tools.definition(arguments["symbol"])[:RESULTS_PER_CALL]
    return tools.callers(arguments["symbol"])[:RESULTS_PER_CALL]


def _objects(text: str) -> list[Any]:
    """Every JSON value that starts at a ``{`` of ``text`` (prose or a fence around it)."""
    decoder, found, at = json.JSONDecoder(), [], text.find("{")
    while at != -1:
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            at = text.find("{", at + 1)
            continue
        found.append(value)
        at = text.find("{", end)
    return found


def written_calls(text: str) -> tuple[ToolCall, ...]:
    """The tool calls a model without tool calling wrote as ``{"more": [{"tool": ...,
    "arguments": {...}}]}`` (one call or a list; pure). An answer object holds none. A call that
    names no tool is passed on with an empty name, so that the model hears why it was refused."""
    for value in _objects(text):
        if not isinstance(value, dict) or "more" not in value:
            continue
        asked = value["more"]
        asked = asked if isinstance(asked, list) else [asked]
        calls = []
        for number, one in enumerate(asked):
            one = one if isinstance(one, dict) else {}
            name = one.get("tool", one.get("name", ""))
            arguments = one.get("arguments", {})
            calls.append(
                ToolCall(
                    f"written-{number}",
                    name if isinstance(name, str) else "",
                    arguments if isinstance(arguments, str) else json.dumps(arguments),
                )
            )
        return tuple(calls)
    return ()


def _key(result: Result) -> tuple[str, int, int]:
    return (result.chunk.path, result.chunk.start_line, result.chunk.end_line)


class _Loop:
    """One question's rounds: the conversation, what was read, what was spent."""

    def __init__(
        self,
        question: str,
        results: list[Result],
        note: str | None,
        tools: Tools,
        budget: Budget,
        stage: Callable[[str], None],
        native: bool,
    ) -> None:
        self.tools, self.budget, self.stage, self.native = tools, budget, stage, native
        self.explored = Explored(list(results))
        self.labels = {_key(r): f"S{n}" for n, r in enumerate(results, start=1)}
        self.messages: Messages = build_messages(question, sources_from_results(results), note)
        self.messages[-1] = {
            **self.messages[-1],
            "content": self.messages[-1]["content"] + "\n\n" + (_NOTE if native else _WRITTEN_NOTE),
        }

    def calls_in(self, reply: ModelReply) -> tuple[ToolCall, ...]:
        return reply.tool_calls if self.native else written_calls(reply.text)

    def asked_for(self, reply: ModelReply) -> None:
        """The model's turn calling tools, kept in the conversation before their results."""
        if not self.native:  # its own words; the results follow as the user's turn
            self.messages.append({"role": "assistant", "content": reply.text})
            return
        self.messages.append(
            {
                "role": "assistant",
                "content": reply.text or None,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }
                    for c in reply.tool_calls
                ],
            }
        )

    def call(self, number: int, call: ToolCall, cancel: threading.Event | None) -> None:
        """Run the round's ``number``th call (from 0); its result, or refusal, is its turn."""
        started = time.monotonic()
        record: dict[str, Any] = {
            "round": self.explored.rounds,
            "tool": call.name,
            "arguments_hash": question_hash(call.arguments),
        }
        try:
            if number >= self.budget.calls_per_round:
                record["outcome"] = "over_budget"
                raise ToolRefused(f"at most {self.budget.calls_per_round} calls a round")
            arguments = _arguments(call)
            self.stage(step(call.name, arguments))
            found = _run(self.tools, call.name, arguments)
            content = self._shown(found, record)
        except ToolRefused as exc:
            record.setdefault("outcome", "refused")
            content = f"refused: {exc}"
        record["ms"] = round((time.monotonic() - started) * 1000.0, 1)
        self.explored.calls.append(record)
        if self.native:
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        else:
            said = f"{call.name}({call.arguments})"
            self.messages.append({"role": "user", "content": f"Result of {said}:\n{content}"})
        if cancel is not None and cancel.is_set():
            raise ModelError("cancelled", "the request was cancelled")

    def _shown(self, found: list[Result], record: dict[str, Any]) -> str:
        """The call's places as sources: new ones labelled next, known ones by their label."""
        new = [r for r in dict.fromkeys(found) if _key(r) not in self.labels]
        first = len(self.explored.results) + 1
        for number, result in enumerate(new, start=first):
            self.labels[_key(result)] = f"S{number}"
        self.explored.results.extend(new)
        sources = sources_from_results(self.explored.results)[first - 1 :]
        again = [self.labels[_key(r)] for r in found if r not in new]
        record["outcome"] = "sources" if found else "nothing"
        record["labels"] = [self.labels[_key(r)] for r in found]
        record["content_hashes"] = [r.chunk.content_hash for r in found]
        parts = [tool_sources(sources)] if sources else []
        if again:
            parts.append(f"Already shown above as {', '.join(dict.fromkeys(again))}.")
        return "\n\n".join(parts) or "nothing found"

    def over(self, started: float, spent: int) -> str | None:
        """The budget that has run out, if one has."""
        if self.explored.rounds >= self.budget.rounds:
            return "rounds"
        if spent >= self.budget.tokens:
            return "tokens"
        if time.monotonic() - started >= self.budget.seconds:
            return "seconds"
        return None


def explore(
    question: str,
    results: list[Result],
    note: str | None,
    tools: Tools,
    call: Call,
    budget: Budget,
    *,
    cancel: threading.Event | None = None,
    stage: Callable[[str], None] = lambda _: None,
    native: bool = True,
) -> Explored:
    """Rounds of tool calls until the model answers, a budget runs out or the model fails
    (cancelled at once, a timeout, an error): what was read so far is returned with the error,
    for the trace. ``native``: the model calls tools through litellm's tool calling; otherwise
    it writes them in its reply (:func:`written_calls`)."""
    loop = _Loop(question, results, note, tools, budget, stage, native)
    try:
        loop.explored.stopped = _rounds(loop, call, budget, cancel, stage)
    except ModelError as exc:
        loop.explored.stopped, loop.explored.error = "model_error", exc
    return loop.explored


def _rounds(
    loop: _Loop,
    call: Call,
    budget: Budget,
    cancel: threading.Event | None,
    stage: Callable[[str], None],
) -> str:
    """The rounds, until the model answers ("answered") or the budget that ran out."""
    started, spent = time.monotonic(), 0
    while (stopped := loop.over(started, spent)) is None:
        if cancel is not None and cancel.is_set():
            raise ModelError("cancelled", "the request was cancelled")
        stage("asking the model")
        left = budget.seconds - (time.monotonic() - started)
        try:
            reply = call(loop.messages, TOOLS if loop.native else [], left, loop.explored.results)
        except ModelError as exc:
            # Cut short by the loop's own deadline (not the model's): answer from what it read.
            if exc.kind != "timeout" or time.monotonic() - started < budget.seconds:
                raise
            return "seconds"
        loop.explored.rounds += 1
        spent += reply.prompt_tokens + reply.completion_tokens
        calls = loop.calls_in(reply)
        if not calls:
            loop.explored.reply = reply
            return "answered"
        loop.asked_for(reply)
        for number, tool_call in enumerate(calls):
            loop.call(number, tool_call, cancel)
    return stopped
