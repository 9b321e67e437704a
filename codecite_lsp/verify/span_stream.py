"""The spans of a reply still arriving (pure): each element of the reply object's ``spans``
array, as soon as its last character is in, whatever the sizes of the pieces it arrives in.

It follows only the envelopes whose object the whole-reply reader (envelope.py) is sure to take:
the reply object first in the text (whitespace before it), or the first fenced block holding it
(words before the fence, but no ``{``); the object's own ``spans`` key, never one inside a
wrapper (``{"answer": {...}}``, a tool call written as text), whose outer object is known only
at its end. Any other reply shows nothing until it is whole. ``refusal`` is what the object's
``refuse`` key held, when that came before or among the spans.

Work is linear in the text: each character is looked at once.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE_OPENER = re.compile(r"```[A-Za-z]*[ \t]*\n")
_NOTHING = object()  # no refuse key read yet


class SpanReader:
    """Feed the reply's text piece by piece; each call returns the span values completed by it
    (as JSON data, not yet validated)."""

    def __init__(self) -> None:
        self.text = ""
        self.pos = 0  # the next character to look at
        self.following = False  # inside the reply object
        self.lost = False  # an envelope it cannot follow, or the object ended: nothing more
        self.refusal: Any = _NOTHING
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._key_start = -1  # where the top-level key being read starts
        self._key: str | None = None  # the top-level key whose value is being read
        self._value_start = -1  # where that value starts
        self._in_spans = False
        self._spans_seen = False
        self._item_start = -1  # where the span being read starts

    @property
    def refused(self) -> Any:
        """The ``refuse`` value read, or None."""
        return None if self.refusal is _NOTHING else self.refusal

    def feed(self, piece: str) -> list[Any]:
        self.text += piece
        if self.lost:
            return []
        if not self.following and not self._start():
            return []
        return self._scan()

    def _start(self) -> bool:
        """Find where the reply object starts; False while that is not known yet."""
        stripped = self.text.lstrip()
        if not stripped:
            return False
        offset = len(self.text) - len(stripped)
        if stripped[0] == "{":
            self.pos, self.following = offset, True
            return True
        fence = self.text.find("```")
        brace = self.text.find("{")
        if brace >= 0 and (fence < 0 or brace < fence):
            self.lost = True  # an object cut out of words: only the whole reply tells
            return False
        if fence < 0:
            return False
        opener = _FENCE_OPENER.match(self.text, fence)
        if opener is None:
            if "\n" in self.text[fence:]:
                self.lost = True
            return False
        inside = self.text[opener.end() :]
        if not inside.strip():
            return False
        if inside.lstrip()[0] != "{":
            self.lost = True  # the first fence holds something else
            return False
        self.pos = opener.end() + len(inside) - len(inside.lstrip())
        self.following = True
        return True

    def _scan(self) -> list[Any]:
        found: list[Any] = []
        text = self.text
        while self.pos < len(text) and not self.lost:
            at, char = self.pos, text[self.pos]
            self.pos += 1
            if self._in_string:
                if self._escape:
                    self._escape = False
                elif char == "\\":
                    self._escape = True
                elif char == '"':
                    self._in_string = False
                    self._string_ended(at, found)
                continue
            if char in " \t\r\n":
                continue
            if self._in_spans and self._depth == 2:
                self._between_spans(at, char, found)
            elif char == '"':
                self._in_string = True
                if self._depth == 1 and self._value_start == -1:
                    self._key_start = at
                elif self._depth == 1 and self._value_start == -2:
                    self._value_start = at
            elif char in "{[":
                if self._depth == 1 and self._value_start == -2:
                    self._value_start = at
                    if self._key == "spans" and char == "[":
                        if self._spans_seen:  # a second spans key: the whole reply decides
                            self.lost = True
                            break
                        self._in_spans = self._spans_seen = True
                self._depth += 1
            elif char in "}]":
                self._depth -= 1
                if self._in_spans and self._depth == 2:  # a span object ends
                    found.append(_decoded(text[self._item_start : at + 1]))
                    self._item_start = -1
                elif self._depth == 0:  # the object is whole: the reply is read
                    self._end_value(at)
                    self.lost = True
            elif self._depth == 1 and char == ":":
                self._value_start = -2  # the value starts at the next token
            elif self._depth == 1 and char == ",":
                self._end_value(at)
            elif self._depth == 1 and self._value_start == -2:
                self._value_start = at  # a number, true, false or null
        return found

    def _between_spans(self, at: int, char: str, found: list[Any]) -> None:
        """A character inside the spans array, outside any span object."""
        if char == "]":
            self._scalar_ends(at, found)
            self._depth, self._in_spans = 1, False
        elif char == ",":
            self._scalar_ends(at, found)
        elif char in "{[":
            self._item_start, self._depth = at, 3
        elif char == '"':
            self._item_start, self._in_string = at, True
        elif self._item_start < 0:
            self._item_start = at  # a number or a literal where a span belongs

    def _scalar_ends(self, at: int, found: list[Any]) -> None:
        if self._item_start >= 0:
            found.append(_decoded(self.text[self._item_start : at]))
            self._item_start = -1

    def _string_ended(self, at: int, found: list[Any]) -> None:
        if self._key_start >= 0:
            self._key = _decoded(self.text[self._key_start : at + 1])
            self._key_start = -1
        elif self._in_spans and self._depth == 2:  # a string where a span belongs
            found.append(_decoded(self.text[self._item_start : at + 1]))
            self._item_start = -1

    def _end_value(self, at: int) -> None:
        """The top-level value being read ends before ``at``."""
        if self._key == "refuse" and self._value_start >= 0:
            self.refusal = _decoded(self.text[self._value_start : at])
        self._key, self._value_start = None, -1


def _decoded(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _NOTHING
