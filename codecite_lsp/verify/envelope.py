"""The model's reply, read with a tolerant envelope and a strict content (pure).

Tolerant envelope: models without a JSON mode wrap the object in prose ("Here is the answer:"), in
a ```json fence, or add a remark after it; they add keys of their own, and write line numbers as
strings. Models that litellm gives no schema or tool call write the tool call as text
(``{"name": "answer", "arguments": {...}}``, the arguments also as a JSON string) or put the
object under one key (``{"answer": {...}}``); a refusal object with an empty reason beside an
answer is a placeholder, not a refusal. None of that changes what the reply claims, so the object
is taken out of the text and out of one wrapper, unknown keys are ignored and ``"12"`` reads as
12.

Strict content: every span is one of the known kinds with a text, every citation has a label, two
line numbers and a quote. Anything else is a malformed reply (``model_error``), never a guess.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError

Envelope = Literal["object", "json", "fenced", "extracted"]
"""How the object was found: passed as a dict, the whole text, a fenced block, or cut out of
surrounding text (recorded in the trace)."""

_MAX_STARTS = 64  # '{' positions tried when cutting an object out of text: bounded work


def _line_number(value: Any) -> Any:
    """Integers as the model writes them: 12 or "12"; never True (a bool is an int in Python)."""
    if isinstance(value, bool):
        raise ValueError("a line number is an integer, not true/false")
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    if isinstance(value, int):
        return value
    raise ValueError("a line number is an integer")


LineNumber = Annotated[int, BeforeValidator(_line_number)]


class _Content(BaseModel):
    # Unknown keys are the envelope's business ("confidence", "path"): ignored. Texts stay strict
    # strings: a number where a quote belongs is not a quote.
    model_config = ConfigDict(extra="ignore", strict=True)


class ReplyCitation(_Content):
    source: str
    start_line: LineNumber
    end_line: LineNumber
    quote: str


class ReplyProse(_Content):
    kind: Literal["prose"]
    text: str


class ReplyGap(_Content):
    """What the sources do not show: said as such to the user, never a claim about the code."""

    kind: Literal["gap"]
    text: str


class ReplyClaim(_Content):
    kind: Literal["claim"]
    text: str = Field(min_length=1, pattern=r"\S")
    citations: list[ReplyCitation]  # an empty list is a citation failure, not a shape error


ReplySpan = Annotated[ReplyProse | ReplyGap | ReplyClaim, Field(discriminator="kind")]


class Reply(_Content):
    spans: list[ReplySpan] = Field(default_factory=list)
    refuse: Any = None  # any non-empty value is the model declining (its wording is not trusted)

    @property
    def refused(self) -> bool:
        if self.spans:  # beside an answer, only a refusal that says something declines it
            return says(self.refuse)
        if isinstance(self.refuse, str):
            return says(self.refuse)
        return self.refuse not in (None, False, {}, [])


def says(value: Any) -> bool:
    """Whether a refusal value holds anything: not null, false, empty, or "null"/"none" written
    as strings, nor a container of only those ({"reason": null})."""
    if isinstance(value, str):
        return value.strip().lower() not in ("", "null", "none", "false")
    if isinstance(value, dict):
        return any(says(item) for item in value.values())
    if isinstance(value, list):
        return any(says(item) for item in value)
    return value is not None and value is not False


_SPAN: TypeAdapter[ReplyProse | ReplyGap | ReplyClaim] = TypeAdapter(ReplySpan)


def read_span(data: Any) -> ReplyProse | ReplyGap | ReplyClaim | None:
    """One span of a reply by the same strict rules as the whole reply's, or None when it is
    not one (then the whole reply is malformed)."""
    try:
        return _SPAN.validate_python(data)
    except ValidationError:
        return None


@dataclass(frozen=True)
class Parsed:
    reply: Reply
    envelope: Envelope


_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n(.*?)\n?[ \t]*```", re.DOTALL)


_CALL_ARGUMENTS = ("arguments", "parameters", "input")  # OpenAI, Llama, Anthropic spellings
_MAX_WRAPPERS = 2  # {"type": "function", "function": {"name": ..., "arguments": ...}}


def _is_reply(data: Any) -> bool:
    return isinstance(data, dict) and ("spans" in data or "refuse" in data)


def _unwrapped(data: Any) -> Any:
    """The reply object inside a tool call written as text or under one wrapper key, or ``data``
    as it is."""
    for _ in range(_MAX_WRAPPERS):
        if not isinstance(data, dict) or _is_reply(data):
            return data
        arguments = [data[key] for key in _CALL_ARGUMENTS if key in data]
        if "name" in data and len(arguments) == 1:
            inner = arguments[0]
            if isinstance(inner, str):
                try:
                    inner = json.loads(inner)
                except ValueError:
                    return data
        elif isinstance(data.get("function"), dict):
            inner = data["function"]
        elif len(data) == 1:
            inner = next(iter(data.values()))
        else:
            return data
        if not isinstance(inner, dict):
            return data
        data = inner
    return data


def _find_object(text: str) -> tuple[Any, Envelope] | None:
    """The reply object in ``text``: the whole text, a fenced block, or the first object with
    'spans' or 'refuse' (maybe inside one wrapper) cut out of surrounding prose."""
    stripped = text.strip()
    try:
        return json.loads(stripped), "json"
    except ValueError:
        pass
    for block in _FENCE.finditer(stripped):
        try:
            data = json.loads(block.group(1))
        except ValueError:
            continue
        if _is_reply(_unwrapped(data)):
            return data, "fenced"
    decoder = json.JSONDecoder()
    start = stripped.find("{")
    tried = 0
    while start >= 0 and tried < _MAX_STARTS:
        tried += 1
        try:
            data, _end = decoder.raw_decode(stripped, start)
        except ValueError:
            data = None
        if _is_reply(_unwrapped(data)):
            return data, "extracted"
        start = stripped.find("{", start + 1)
    return None


def parse(raw: str | dict[str, Any]) -> Parsed | str:
    """The validated reply and how it was found, or a plain-words reason why it is malformed."""
    envelope: Envelope = "object"
    data: Any = raw
    if isinstance(raw, str):
        try:
            found = _find_object(raw)
        except RecursionError:  # json's decoder recurses per level: "[[[[..." from a model
            return "the reply's JSON is nested too deeply to read"
        if found is None:
            return "the reply holds no JSON object with 'spans'"
        data, envelope = found
    data = _unwrapped(data)
    if not isinstance(data, dict):
        return f"the reply is a JSON {type(data).__name__}, not an object with 'spans'"
    if not _is_reply(data):
        return "the reply object has no 'spans'"
    try:
        return Parsed(Reply.model_validate(data), envelope)
    except ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(part) for part in first["loc"]) or "reply"
        more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
        return f"the reply has the wrong shape at {location}: {first['msg']}{more}"
