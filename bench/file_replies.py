"""A model played from files: each call's exact prompt written to ``pending/<key>.txt``, its
reply read from ``replies/<key>.json`` (written by whoever plays the model), for the benchmarks
that put a model in the loop without one reachable (model_in_loop.py, eval_support.py).

The key is the call's place (``q03-02``: the second call of the third question) and the hash of
its messages and tools: the same prompt gets the same reply on a rerun, a changed prompt (a
rule changed) asks again. The reply goes to litellm's ``mock_response`` by the caller, so the
path around the model stays real.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

Messages = list[dict[str, Any]]


class Pending(Exception):
    """A call whose reply nobody has written yet: its prompt is in ``pending/``."""


def call_key(messages: Messages, tools: list[dict[str, Any]] | None) -> str:
    text = json.dumps([messages, tools or []], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def prompt_text(
    messages: Messages, schema: dict[str, Any] | None, tools: list[dict[str, Any]] | None
) -> str:
    """The call as the model gets it, for a reader: messages, the reply shape, the tools."""
    parts = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, str):
            content = json.dumps(message, ensure_ascii=False, indent=1)
        parts.append(f"===== {message['role']} =====\n{content}")
    if schema is not None:
        parts.append("===== reply shape (JSON schema) =====\n" + json.dumps(schema))
    if tools:
        names = [tool["function"]["name"] for tool in tools]
        parts.append(
            "===== tools offered =====\n"
            + json.dumps(tools)
            + '\nTo call them reply {"tool_calls": [{"function": {"name": NAME, "arguments": '
            "{...}}}]}; names: " + ", ".join(names)
        )
    return "\n\n".join(parts) + "\n"


def reply(
    work: Path,
    place: str,
    messages: Messages,
    schema: dict[str, Any] | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> tuple[str, str]:
    """(the key, the reply written for this call); raises Pending after writing its prompt."""
    key = f"{place}-{call_key(messages, tools)}"
    reply_file = work / "replies" / f"{key}.json"
    if not reply_file.exists():
        pending = work / "pending" / f"{key}.txt"
        pending.parent.mkdir(parents=True, exist_ok=True)
        pending.write_text(prompt_text(messages, schema, tools), encoding="utf-8")
        raise Pending(key)
    return key, reply_file.read_text(encoding="utf-8").strip()
