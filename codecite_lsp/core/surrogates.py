"""Lone surrogates in a JSON message made U+FFFD, before any parser or handler sees them.

JSON may escape a lone surrogate (``"\\udcff.py"``: what ``json.dumps`` writes for a file name
that is not UTF-8, what a JavaScript string may hold), which is not Unicode text. Left in, it
fails wherever text is encoded: the MCP SDK's parser refuses the whole line, so the request was
never answered (issue 42); the language server's answers, history and logs failed with an
internal error. Bytes that are not UTF-8 the servers already read as U+FFFD; a lone surrogate is
the same thing written one layer up, so it becomes U+FFFD too (one UTF-16 unit for one: client
positions stay right) and the message is served like any other.
"""

from __future__ import annotations

import json
import re
from typing import Any

# A surrogate's escape, paired or lone: only a message holding one is parsed here.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
# Once parsed, a surrogate left in a string is a lone one: a valid pair decodes to one character.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def without_lone_surrogates(message: bytes) -> bytes:
    """``message`` (JSON text) with each lone surrogate escaped in it made U+FFFD; anything
    else as it is, JSON or not (a parser refuses what is not JSON, as before)."""
    if not _SURROGATE_ESCAPE.search(message):
        return message
    try:
        value = json.loads(message.decode("utf-8", "replace"))
        cleaned = _cleaned(value)
    except (ValueError, RecursionError):
        return message
    if cleaned == value:
        return message  # only valid pairs (or an escaped backslash before "ud..")
    ending = message[len(message.rstrip()) :]  # a line stays a line
    return json.dumps(cleaned, ensure_ascii=False).encode("utf-8") + ending


def _cleaned(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_cleaned(item) for item in value]
    if isinstance(value, dict):
        return {_cleaned(key): _cleaned(item) for key, item in value.items()}
    return value
