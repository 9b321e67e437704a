"""Typed params of codecite's own requests and commands, built by one strict cattrs converter.

A wrong param is answered with InvalidParams (-32602) whose message names the field
(``limit must be a whole number``, ``position.line must be >= 0``), never -32603.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

import attrs
import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError
from pygls.exceptions import JsonRpcInvalidParams

MAX_LIMIT = 200
MAX_HISTORY_OFFSET = 10_000_000

P = TypeVar("P")


def _non_empty(limit: int | None = None) -> Any:
    """A question or query has no length limit here: the answerer and retrieval cut it to
    ``core.limits.MAX_QUESTION_CHARS`` and say so (framing already bounds a message's size)."""

    def check(_: Any, field: attrs.Attribute[str], value: str) -> None:
        if not value.strip():
            raise ValueError(f"{field.name} must be a non-empty string")
        if limit is not None and len(value) > limit:
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


@attrs.frozen
class AskParams:
    question: str = attrs.field(validator=_non_empty())
    uri: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(_non_empty(4096))
    )
    position: Position | None = None


@attrs.frozen
class SearchParams:
    query: str = attrs.field(validator=_non_empty())
    limit: int = attrs.field(default=10, validator=_between(1, MAX_LIMIT))
    uri: str | None = None


@attrs.frozen
class HistoryParams:
    """One page, newest first: ``offset`` entries are skipped, then ``limit`` returned."""

    limit: int = attrs.field(default=20, validator=_between(1, MAX_LIMIT))
    offset: int = attrs.field(default=0, validator=_between(0, MAX_HISTORY_OFFSET))


@attrs.frozen
class CitationArg:
    """What openCitation needs to find the file; the rest is checked by the citation model."""

    path: str = attrs.field(validator=_non_empty(4096))
    root: str | None = None


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
converter.register_structure_hook(int, _strict(int, "a whole number"))
converter.register_structure_hook(str, _strict(str, "a string"))


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
            out.append(text if name is None or text.startswith(f"{name} ") else f"{field} {text}")
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
