"""One model call through litellm: structured output, timeout, transient-error retries, cancel.

litellm is imported on the first call only (it takes ~5 s and ~200 MB), never at server start-up.

Testing aid: ``CODECITE_MOCK_RESPONSE`` makes every call go through litellm's own
``mock_response=`` mechanism, so the whole path around the model stays real. Its value is either
a reply (raw text), or ``@path`` to a JSON file holding one reply (an object) or a list of replies
consumed one per litellm call (the last one repeats), so "a retry that fixes the answer" can be
scripted for a separate server process. A reply that is an object is sent as its JSON text. The
reply ``"litellm.RateLimitError"`` / ``"litellm.InternalServerError"`` makes litellm raise that
error; ``"litellm.Timeout"``, ``"litellm.APIConnectionError"``, ``"litellm.AuthenticationError"``
and ``"litellm.BadRequestError"`` are passed to litellm as exception instances, which it raises.
``CODECITE_MOCK_DELAY`` (seconds) is handed to litellm's ``mock_delay=``: a slow model. A reply
that is an object with ``tool_calls`` (litellm's tool-call shape, ``arguments`` an object or its
JSON text) is handed to litellm's ``mock_tool_calls=``: a model that calls the loop's tools
(streamed, as one chunk holding them: litellm's mock streams no ``mock_tool_calls``).

Streaming: given a ``Listener``, the reply is asked for with ``stream=True`` and its text (the
content, or the forced answer tool's arguments) handed over as it arrives; the reply returned
is built from the chunks by litellm (``stream_chunk_builder``), so it is the same text.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from ..core.environment import apply_defaults

MOCK_ENV = "CODECITE_MOCK_RESPONSE"
MOCK_DELAY_ENV = "CODECITE_MOCK_DELAY"

ErrorKind = Literal["timeout", "api_error", "auth", "bad_request", "cancelled", "empty_reply"]


class ModelError(Exception):
    """The model gave no usable reply; ``message`` is plain words fit for the user."""

    def __init__(self, kind: ErrorKind, message: str, attempts: int = 0) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.attempts = attempts  # litellm calls made before giving up


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call of a loop tool the model made: ``arguments`` is the JSON text it wrote."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ModelReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    attempts: int = 1  # litellm calls made, transient-error retries included
    mode: str = "prompt"  # how the reply shape was asked for (OutputMode), for the trace
    tool_calls: tuple[ToolCall, ...] = ()  # the loop tools it called instead of answering


class Listener(Protocol):
    """Hears a streamed reply's text as it arrives (from the model call's thread)."""

    def feed(self, piece: str) -> None: ...

    def restart(self) -> None:
        """A new litellm call (a transient error's retry): the reply starts again."""
        ...


class MockReplies:
    """Scripted replies handed to litellm's ``mock_response=``, one per litellm call."""

    def __init__(self, replies: Sequence[str]) -> None:
        if not replies:
            raise ValueError("a mock script needs at least one reply")
        self._replies = list(replies)
        self._next = 0
        self._lock = threading.Lock()

    def take(self) -> str:
        with self._lock:
            reply = self._replies[min(self._next, len(self._replies) - 1)]
            self._next += 1
            return reply

    @classmethod
    def parse(cls, value: str) -> MockReplies:
        """``value`` is a reply, or ``@file`` with one JSON reply or a JSON list of replies."""
        if not value.startswith("@"):
            return cls([value])
        path = Path(value[1:]).expanduser()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{MOCK_ENV}: cannot read mock replies from {path}: {exc}") from None
        items = data if isinstance(data, list) else [data]
        return cls([item if isinstance(item, str) else json.dumps(item) for item in items])


def mock_replies_from_env(environ: Mapping[str, str] | None = None) -> MockReplies | None:
    value = (os.environ if environ is None else environ).get(MOCK_ENV)
    return MockReplies.parse(value) if value else None


_TRANSIENT = (
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "APIConnectionError",
    "BadGatewayError",
)
_MOCK_EXCEPTIONS = {
    "litellm.Timeout": "Timeout",
    "litellm.APIConnectionError": "APIConnectionError",
    "litellm.AuthenticationError": "AuthenticationError",
    "litellm.BadRequestError": "BadRequestError",
}


def _litellm() -> Any:
    apply_defaults()  # before the import: no price-table download
    import litellm

    litellm.suppress_debug_info = True  # no "Provider List" banners on the terminal
    return litellm


def _mock_arguments(litellm: Any, reply: str, model: str, stream: bool) -> dict[str, Any]:
    """litellm's mock keywords for one scripted reply: its text, an exception, or tool calls."""
    name = _MOCK_EXCEPTIONS.get(reply)
    if name is not None:
        error = getattr(litellm, name)(message=f"mock {name}", llm_provider="openai", model=model)
        return {"mock_response": error}
    calls = _mock_tool_calls(reply)
    if calls and stream:  # a whole response: litellm streams it as one chunk
        message = {"role": "assistant", "content": None, "tool_calls": calls}
        return {"mock_response": litellm.ModelResponse(choices=[{"message": message}])}
    if calls:
        return {"mock_response": "", "mock_tool_calls": calls}
    return {"mock_response": reply}


def _mock_tool_calls(reply: str) -> list[dict[str, Any]]:
    """The tool calls of a scripted ``{"tool_calls": [...]}`` reply, in litellm's shape."""
    if not reply.lstrip().startswith('{"tool_calls"'):
        return []
    calls = json.loads(reply)["tool_calls"]
    shaped = []
    for number, call in enumerate(calls, start=1):
        function = dict(call["function"])
        if not isinstance(function.get("arguments"), str):
            function["arguments"] = json.dumps(function.get("arguments", {}))
        shaped.append({"id": call.get("id", f"call_{number}"), "type": "function",
                       "function": function})  # fmt: skip
    return shaped


_MISSING_KEY = re.compile(r"missing credentials|api_key client option must be set", re.IGNORECASE)


def _classify(litellm: Any, exc: Exception, timeout: float) -> tuple[ModelError, bool]:
    """Map a litellm exception to (error for the user, whether retrying may help)."""
    if isinstance(exc, litellm.Timeout):
        return ModelError("timeout", f"the model timed out after {timeout:g} s"), False
    if isinstance(exc, litellm.AuthenticationError):
        return ModelError("auth", f"the model refused the credentials: {_short(exc)}"), False
    if isinstance(exc, litellm.BadRequestError):  # includes context-window errors
        return ModelError("bad_request", f"the model rejected the request: {_short(exc)}"), False
    if _MISSING_KEY.search(str(exc)):  # raised as a "server error" before any request is made
        return ModelError("auth", f"no API key for the model: {_short(exc)}"), False
    transient = any(isinstance(exc, getattr(litellm, n)) for n in _TRANSIENT if hasattr(litellm, n))
    status = getattr(exc, "status_code", None)
    transient = transient or (isinstance(status, int) and status >= 500)
    return ModelError("api_error", f"the model service failed: {_short(exc)}"), transient


def _short(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:197] + "..."


OutputMode = Literal["json_schema", "tool_call", "prompt"]
_TOOL = "cited_answer"


def _supports(litellm: Any, check: str, model: str) -> bool:
    try:
        return bool(getattr(litellm, check)(model=model))
    except Exception:  # unknown provider strings raise in some litellm versions
        return False


def _output_mode(
    litellm: Any, model: str, schema: dict[str, Any] | None
) -> tuple[OutputMode, dict[str, Any]]:
    """How to ask for the reply shape, as litellm says the provider can take it: a JSON schema,
    else a forced tool call whose arguments are the reply, else the prompt alone (the tolerant
    envelope in reply.py takes the object out of whatever text comes back)."""
    if schema is None:
        return "prompt", {}
    if _supports(litellm, "supports_response_schema", model):
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": schema, "strict": True},
        }
        return "json_schema", {"response_format": response_format}
    if _supports(litellm, "supports_function_calling", model):
        tool = {
            "type": "function",
            "function": {
                "name": _TOOL,
                "description": "The answer, every claim with verbatim citations.",
                "parameters": schema,
            },
        }
        choice = {"type": "function", "function": {"name": _TOOL}}
        return "tool_call", {"tools": [tool], "tool_choice": choice}
    return "prompt", {}


def supports_tools(model: str) -> bool:
    """Whether litellm says ``model`` can call tools (the tool loop's ``auto``)."""
    return _supports(_litellm(), "supports_function_calling", model)


def _with_tools(shape: dict[str, Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The reply shape's keywords with the loop's tools offered too: the model may call them or
    answer (a forced answer tool becomes one choice among them)."""
    return {**shape, "tools": [*shape.get("tools", []), *tools], "tool_choice": "auto"}


def _tool_calls(message: Any) -> tuple[ToolCall, ...]:
    """The loop-tool calls of a reply (never the answer tool's)."""
    found = []
    for call in getattr(message, "tool_calls", None) or []:
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        if name and name != _TOOL:
            arguments = getattr(function, "arguments", None) or "{}"
            found.append(ToolCall(str(getattr(call, "id", "") or ""), str(name), str(arguments)))
    return tuple(found)


def _reply_text(message: Any) -> str:
    """The reply: the forced tool call's arguments when there is one, else the message text."""
    for call in getattr(message, "tool_calls", None) or []:
        function = getattr(call, "function", None)
        arguments = getattr(function, "arguments", None)
        if getattr(function, "name", None) == _TOOL and arguments:
            return str(arguments)
    return str(message.content or "")


def _streamed(
    litellm: Any,
    kwargs: dict[str, Any],
    mode: OutputMode,
    listener: Listener,
    stop: threading.Event,
) -> Any:
    """Ask with ``stream=True``, hand the reply's text to ``listener`` as it arrives, and return
    the whole response as litellm builds it from the chunks. A reply calling a loop tool is no
    answer: from its first such chunk nothing more is handed over."""
    chunks = []
    names: dict[int, str] = {}  # tool call index -> its function's name (in its first chunk)
    answering = True
    for chunk in litellm.completion(**kwargs, stream=True):
        if stop.is_set():
            raise ModelError("cancelled", "the request was cancelled")
        chunks.append(chunk)
        delta = chunk.choices[0].delta if chunk.choices else None
        if delta is None:
            continue
        pieces = []
        for call in getattr(delta, "tool_calls", None) or []:
            function = getattr(call, "function", None)
            name, arguments = getattr(function, "name", None), getattr(function, "arguments", None)
            if name:
                names[call.index] = str(name)
            if names.get(call.index) != _TOOL:
                answering = False
            elif mode == "tool_call" and arguments:
                pieces.append(str(arguments))
        if mode != "tool_call" and getattr(delta, "content", None):
            pieces.append(delta.content)
        if answering and pieces:
            listener.feed("".join(pieces))
    return litellm.stream_chunk_builder(chunks, messages=kwargs["messages"])


def _call_in_thread(
    fn: Any, kwargs: dict[str, Any], wait: float, cancel: threading.Event | None
) -> Any:
    """Run the blocking litellm call in a daemon thread so cancel and a hard deadline work."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = fn(**kwargs)
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="codecite-model-call", daemon=True).start()
    deadline = time.monotonic() + wait
    while not done.wait(0.05):
        if cancel is not None and cancel.is_set():
            raise ModelError("cancelled", "the request was cancelled")
        if time.monotonic() > deadline:
            raise TimeoutError
    if "error" in box:
        raise box["error"]
    return box["value"]


def _pause(seconds: float, cancel: threading.Event | None) -> None:
    """Sleep, cut short by cancel."""
    if cancel is None:
        time.sleep(seconds)
    elif cancel.wait(seconds):
        raise ModelError("cancelled", "the request was cancelled")


def complete(
    messages: list[dict[str, Any]],
    model: str,
    *,
    timeout: float,
    retries: int,
    schema: dict[str, Any] | None,
    cancel: threading.Event | None = None,
    mock_response: str | MockReplies | None = None,
    backoff: float = 0.5,
    api_key: str | None = None,
    tools: list[dict[str, Any]] | None = None,
    listener: Listener | None = None,
) -> ModelReply:
    """Ask ``model`` once (plus up to ``retries`` retries on transient errors); raise ModelError.
    ``tools``: the tool loop's functions, which the model may call instead of answering;
    ``listener``: streams the reply to it as it arrives."""
    if cancel is not None and cancel.is_set():
        raise ModelError("cancelled", "the request was cancelled")
    litellm = _litellm()
    if mock_response is None:
        mock_response = mock_replies_from_env()
    kwargs: dict[str, Any] = {"model": model, "messages": messages, "timeout": timeout}
    if mock_response is not None and os.environ.get(MOCK_DELAY_ENV):
        kwargs["mock_delay"] = float(os.environ[MOCK_DELAY_ENV])
    if api_key:
        kwargs["api_key"] = api_key
    mode, shape = _output_mode(litellm, model, schema)
    kwargs.update(_with_tools(shape, tools) if tools else shape)
    started = time.monotonic()
    attempt = 0
    while True:
        attempt += 1
        if mock_response is not None:
            reply = (
                mock_response.take() if isinstance(mock_response, MockReplies) else mock_response
            )
            kwargs.pop("mock_tool_calls", None)
            kwargs.update(_mock_arguments(litellm, reply, model, listener is not None))
        stop = threading.Event()  # the caller stopped waiting: the stream must not go on
        try:
            # the extra second lets litellm raise its own Timeout before the hard deadline
            if listener is None:
                response = _call_in_thread(litellm.completion, kwargs, timeout + 1.0, cancel)
            else:
                if attempt > 1:
                    listener.restart()
                streamed = {"litellm": litellm, "kwargs": kwargs, "mode": mode,
                            "listener": listener, "stop": stop}  # fmt: skip
                response = _call_in_thread(_streamed, streamed, timeout + 1.0, cancel)
            break
        except TimeoutError:
            error = ModelError("timeout", f"the model timed out after {timeout:g} s")
            transient = False
        except ModelError as exc:  # cancelled while waiting
            error, transient = exc, False
        except Exception as exc:
            error, transient = _classify(litellm, exc, timeout)
        finally:
            stop.set()
        if not transient or attempt > retries:
            error.attempts = attempt
            raise error
        try:
            _pause(backoff * 2 ** (attempt - 1), cancel)  # exponential backoff
        except ModelError as exc:
            exc.attempts = attempt
            raise
    message = response.choices[0].message if response is not None else None
    text, calls = (_reply_text(message), _tool_calls(message)) if message else ("", ())
    if not text.strip() and not calls:
        raise ModelError("empty_reply", "the model returned an empty reply", attempt)
    usage = getattr(response, "usage", None)
    return ModelReply(
        text=text,
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        latency_ms=(time.monotonic() - started) * 1000.0,
        attempts=attempt,
        mode=mode,
        tool_calls=calls,
    )
