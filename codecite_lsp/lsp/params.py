"""Typed params of codecite's own requests and commands, built by one strict cattrs converter.

A wrong param is answered with InvalidParams (-32602) whose message names the field
(``limit must be a whole number``, ``position.line must be >= 0``), never -32603.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

import attrs
import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError
from pygls.exceptions import JsonRpcInvalidParams

from ..core.limits import (
    MAX_ANSWER_CHARS,
    MAX_HASH_CHARS,
    MAX_HISTORY_OFFSET,
    MAX_LIMIT,
    MAX_LINE,
    MAX_PATH_CHARS,
    MAX_QUOTE_CHARS,
    MAX_TEXT_CHARS,
    MAX_TURNS,
    MAX_URI_CHARS,
)

P = TypeVar("P")


def _text(limit: int, *, path: bool = False) -> Any:
    """A non-empty string of at most ``limit`` characters (core/limits.py), checked before any
    work; a question longer than the answerer reads is cut there, and says so. A path holds no
    NUL: no file is named so, and the OS calls would fail on it."""

    def check(_: Any, field: attrs.Attribute[str], value: str) -> None:
        if not value.strip():
            raise ValueError(f"{field.name} must be a non-empty string")
        if len(value) > limit:
            raise ValueError(f"{field.name} is too long ({len(value)} characters; at most {limit})")
        if path and "\0" in value:
            raise ValueError(f"{field.name} must not hold a NUL character")

    return check


def _at_most(limit: int) -> Any:
    def check(_: Any, field: attrs.Attribute[str | None], value: str | None) -> None:
        if value is not None and len(value) > limit:
            raise ValueError(f"{field.name} is too long ({len(value)} characters; at most {limit})")

    return check


def _between(low: int, high: int, within: str = "") -> Any:
    def check(_: Any, field: attrs.Attribute[int], value: int) -> None:
        if not low <= value <= high:
            name = f"{within}.{field.name}" if within else field.name
            raise ValueError(f"{name} must be a whole number from {low} to {high}")

    return check


@attrs.frozen
class Position:
    line: int = attrs.field(validator=_between(0, 2**31 - 1, "position"))
    character: int = attrs.field(validator=_between(0, 2**31 - 1, "position"))


_uri = _text(MAX_URI_CHARS, path=True)


def _answer_json(_: Any, field: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, dict):
        raise TypeError(
            f"answer must be an object (as codecite/ask sent it), got {_json_type(value)}"
        )
    if value.get("status") not in ("answered", "refused"):
        raise ValueError("answer must be an answer: status 'answered' or 'refused'")
    if len(json.dumps(value)) > MAX_ANSWER_CHARS:
        raise ValueError(f"answer is too large (at most {MAX_ANSWER_CHARS} characters of JSON)")


def _turns(_: Any, field: attrs.Attribute[Any], value: list[Any]) -> None:
    if len(value) > MAX_TURNS:
        raise ValueError(f"history has {len(value)} turns; at most {MAX_TURNS}")


@attrs.frozen
class Turn:
    """An earlier question of the conversation and the answer the server gave it."""

    question: str = attrs.field(validator=_text(MAX_TEXT_CHARS))
    answer: Any = attrs.field(validator=_answer_json)


@attrs.frozen
class AskParams:
    question: str = attrs.field(validator=_text(MAX_TEXT_CHARS))
    uri: str | None = attrs.field(default=None, validator=attrs.validators.optional(_uri))
    position: Position | None = None
    history: list[Turn] = attrs.field(factory=list, validator=_turns)


@attrs.frozen
class SearchParams:
    query: str = attrs.field(validator=_text(MAX_TEXT_CHARS))
    limit: int = attrs.field(default=10, validator=_between(1, MAX_LIMIT))
    uri: str | None = attrs.field(default=None, validator=attrs.validators.optional(_uri))


@attrs.frozen
class HistoryParams:
    """One page, newest first: ``offset`` entries are skipped, then ``limit`` returned."""

    limit: int = attrs.field(default=20, validator=_between(1, MAX_LIMIT))
    offset: int = attrs.field(default=0, validator=_between(0, MAX_HISTORY_OFFSET))


def _optional_between(low: int, high: int) -> Any:
    return attrs.validators.optional(_between(low, high))


@attrs.frozen
class CitationArg:
    """A citation as openCitation receives it: every field bounded and typed here, before any
    work; whether the fields make a citation is checked by the citation model."""

    path: str = attrs.field(validator=_text(MAX_PATH_CHARS, path=True))
    root: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(_text(MAX_URI_CHARS, path=True))
    )
    quote: str | None = attrs.field(default=None, validator=_at_most(MAX_QUOTE_CHARS))
    start_line: int | None = attrs.field(default=None, validator=_optional_between(0, MAX_LINE))
    end_line: int | None = attrs.field(default=None, validator=_optional_between(0, MAX_LINE))
    start_byte: int | None = attrs.field(default=None, validator=_optional_between(0, 2**40))
    end_byte: int | None = attrs.field(default=None, validator=_optional_between(0, 2**40))
    content_hash: str | None = attrs.field(default=None, validator=_at_most(MAX_HASH_CHARS))
    revision: str | None = attrs.field(default=None, validator=_at_most(MAX_HASH_CHARS))
    quote_hash: str | None = attrs.field(default=None, validator=_at_most(MAX_HASH_CHARS))
    chunk_hash: str | None = attrs.field(default=None, validator=_at_most(MAX_HASH_CHARS))


def _strict(kind: type, name: str) -> Any:
    def structure(value: Any, _: Any) -> Any:
        # bool is an int to Python, and cattrs would turn "10" into 10 and 1.5 into 1.
        if isinstance(value, bool) or not isinstance(value, kind):
            raise TypeError(f"must be {name}, got {_json_type(value)}")
        return value

    return structure


def _json_type(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    names.update({list: "an array", tuple: "an array", dict: "an object", type(None): "null"})
    return names.get(type(value), type(value).__name__)


converter = cattrs.Converter(forbid_extra_keys=False)
converter.register_structure_hook_func(
    lambda kind: kind == list[Turn], lambda v, _: _turn_list(v, _)
)
converter.register_structure_hook(int, _strict(int, "a whole number"))
converter.register_structure_hook(str, _strict(str, "a string"))


def _turn_list(value: Any, _: Any) -> list[Turn]:
    if not isinstance(value, list):  # a string would otherwise be read as a list of letters
        raise TypeError(f"must be an array of turns, got {_json_type(value)}")
    turns: list[Turn] = []
    for index, item in enumerate(value):
        where = f"history[{index}]"
        if not isinstance(item, dict):
            raise TypeError(f"{where} must be an object, got {_json_type(item)}")
        try:
            turns.append(converter.structure(item, Turn))
        except ClassValidationError as exc:
            # every message names its field (a validator's says "answer must be ...")
            raise ValueError("; ".join(f"{where}.{m}" for m in _messages(exc, ""))) from None
    return turns


def parse(kind: type[P], value: Any, what: str) -> P:
    """``value`` (JSON) as ``kind``, or InvalidParams saying which field is wrong and how."""
    value = plain(value)
    if not isinstance(value, dict):
        raise JsonRpcInvalidParams(f"{what}: params must be an object, got {_json_type(value)}")
    try:
        return converter.structure(value, kind)
    except ClassValidationError as exc:
        raise JsonRpcInvalidParams(f"{what}: {'; '.join(_messages(exc, ''))}") from None
    except (ValueError, TypeError, ForbiddenExtraKeysError) as exc:  # an attrs validator
        raise JsonRpcInvalidParams(f"{what}: {exc}") from None


def _messages(exc: BaseException, prefix: str) -> list[str]:
    """cattrs' nested errors as ``field message`` lines (``position.line must be ...``)."""
    out: list[str] = []
    for sub in getattr(exc, "exceptions", []):
        notes = getattr(sub, "__notes__", [])
        name = next((getattr(n, "name", None) for n in notes if hasattr(n, "name")), None)
        field = f"{prefix}{name}" if name else prefix.rstrip(".")
        if isinstance(sub, ClassValidationError):
            out.extend(_messages(sub, f"{field}."))
        elif isinstance(sub, KeyError):
            out.append(f"{field} is required")
        else:
            text = str(sub)
            named = name is not None and text.startswith((f"{name} ", f"{name}[", f"{name}."))
            out.append(text if name is None or named else f"{field} {text}")
    return out or [str(exc)]


def plain(value: Any) -> Any:
    """pygls hands custom-request params over as namedtuples: turn them back into JSON values."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def one_argument(args: tuple[Any, ...], command: str) -> dict[str, Any]:
    """A command's single object argument (``workspace/executeCommand`` passes a list)."""
    if len(args) != 1 or not isinstance(plain(args[0]), dict):
        raise JsonRpcInvalidParams(f"{command} takes exactly one object argument")
    value: dict[str, Any] = plain(args[0])
    return value


def uri_to_path(uri: str) -> Path:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise JsonRpcInvalidParams(f"only file:// URIs are supported, got {uri!r}")
    return Path(unquote(parsed.path)).resolve()
