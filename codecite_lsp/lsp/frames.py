"""LSP base-protocol framing (``Content-Length: N`` headers, a blank line, N bytes of JSON) that a
bad frame cannot derail. Pure: bytes in, frames and problems out; the reading is in protocol.py.

pygls' own reader matched ``Content-Length: N\\r\\n`` exactly and trusted N, so one frame with a
lower-case header, LF line ends, a wrong length or a truncated body made it drop every later
message, and ``Content-Length: 2000000000`` waited for two gigabytes that never came.

How this parser resynchronises: a header line ``Content-Length: <digits>`` followed by a raw line
end can never occur inside a JSON body (JSON strings cannot hold a raw line end, and outside
strings there are no letters). So
- before a header, anything that is not one is skipped up to the next ``Content-Length`` line;
- while a body is read, such a header inside the declared length means the length was wrong (or
  the frame was cut short): the body ends there, and the header starts the next frame.
A bad frame therefore costs that frame only. Header names are case-insensitive and LF-only line
ends are accepted, as the LSP specification's HTTP-style headers allow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_BODY_BYTES = 64 * 1024 * 1024  # larger than any real LSP message, far below MemoryError
MAX_HEADER_BYTES = 8 * 1024  # a header block this long without its blank line is garbage
# LSP messages nest a dozen levels; Python's JSON parser recurses per level and raised
# RecursionError (no reply at all) on 100,000 nested arrays.
MAX_JSON_DEPTH = 128

_HEADER = re.compile(rb"(?i)content-length[ \t]*:[ \t]*(\d+)[ \t]*\r?\n")
_HEADER_NAME = re.compile(rb"(?i)content-length[ \t]*:")
_NAME = b"content-length"
_HEADER_REST = re.compile(rb"[ \t]*(:[ \t]*(\d+[ \t]*\r?)?)?")
_LINE = re.compile(rb"([^\r\n]*)\r?\n")
_OTHER_HEADER = re.compile(rb"[A-Za-z0-9-]+[ \t]*:[^\r\n]*")
# Bytes kept from the end of a searched region: a header split across two reads is still found.
_OVERLAP = 64


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
# An opening bracket as +1, a closing one as -1 (int8): the depth is their running sum.
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def too_deep(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON in ``body`` nests arrays and objects deeper than ``limit``, found in
    linear time before it is parsed (brackets inside strings do not count)."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False  # the common case: too few brackets to nest that deep
    import numpy as np  # only for a body with this many brackets

    steps = np.frombuffer(_JSON_STRING.sub(b"", body).translate(_STEPS, _NOT_BRACKETS), np.int8)
    # numpy: a Python loop took 1.4 s over 10 MB of brackets, with the event loop waiting.
    return bool(steps.size) and int(np.cumsum(steps, dtype=np.int64).max()) > limit


def _could_be_header(data: bytes) -> bool:
    """Whether ``data`` is the beginning of a Content-Length header line (more bytes to come)."""
    lowered = data.lower()
    if not lowered.startswith(_NAME[: len(lowered)]):
        return False
    return len(lowered) <= len(_NAME) or bool(_HEADER_REST.fullmatch(lowered[len(_NAME) :]))


@dataclass(frozen=True)
class Frame:
    body: bytes


@dataclass(frozen=True)
class Problem:
    """A framing error, for the log. (A body that arrived but is not JSON is a ``Frame``: the
    server answers it with a parse error.)"""

    message: str


Event = Frame | Problem


class FrameParser:
    """Feed bytes as they arrive; get whole frames and framing problems back in order."""

    def __init__(self, max_body: int = MAX_BODY_BYTES) -> None:
        self.max_body = max_body
        self._buffer = bytearray()
        self._length: int | None = None  # set while a body is being read
        self._searched = 0  # body bytes already searched for a stray header

    def feed(self, data: bytes) -> list[Event]:
        self._buffer += data
        events: list[Event] = []
        while True:
            event = self._body() if self._length is not None else self._headers()
            if event is None:
                return events
            events.append(event)

    # -- headers ------------------------------------------------------------------------------

    def _headers(self) -> Event | None:
        match = _HEADER.search(self._buffer)
        if match is None:
            return self._no_header_yet()
        if match.start() > 0:
            skipped = bytes(self._buffer[: match.start()])
            del self._buffer[: match.start()]
            if skipped.strip():
                return Problem(f"skipped {len(skipped)} bytes that were not a message header")
            return self._headers()
        position = match.end()
        length = int(match.group(1))
        while True:  # the rest of the header block, up to its blank line
            line = _LINE.match(self._buffer, position)
            if line is None:
                if len(self._buffer) - position > MAX_HEADER_BYTES:
                    return self._drop(position, "a header block without its blank line")
                return None  # wait for more bytes
            position = line.end()
            content = line.group(1).strip()
            if not content:
                break
            if _HEADER.match(self._buffer, line.start()):
                return self._drop(line.start(), "a second Content-Length before the blank line")
            if not _OTHER_HEADER.fullmatch(content):
                return self._drop(line.start(), "a header line that is not 'Name: value'")
        del self._buffer[:position]
        if length > self.max_body:
            # Refused before anything is allocated; its body is skipped as garbage.
            return Problem(f"refused a Content-Length of {length} bytes (at most {self.max_body})")
        self._length, self._searched = length, 0
        return self._body()

    def _no_header_yet(self) -> Event | None:
        """No complete header in the buffer: keep what may become one, drop the rest."""
        name = _HEADER_NAME.search(self._buffer)
        if name is not None:
            if name.start() > 0:
                skipped = bytes(self._buffer[: name.start()])
                del self._buffer[: name.start()]
                if skipped.strip():
                    return Problem(f"skipped {len(skipped)} bytes that were not a message header")
            end = _LINE.match(self._buffer)
            if end is None:
                return None  # the rest of the line is still to come
            line = bytes(self._buffer[: end.end()]).strip()  # a whole line, not a valid header
            del self._buffer[: end.end()]
            return Problem(f"bad header {line[:80]!r}: Content-Length must be a number")
        keep = _OVERLAP if len(self._buffer) > _OVERLAP else len(self._buffer)
        if len(self._buffer) > keep and bytes(self._buffer[:-keep]).strip():
            dropped = len(self._buffer) - keep
            del self._buffer[:-keep]
            return Problem(f"skipped {dropped} bytes that were not a message header")
        return None

    def _drop(self, position: int, why: str) -> Problem:
        del self._buffer[:position]
        return Problem(f"dropped a frame: {why}")

    # -- body ---------------------------------------------------------------------------------

    def _body(self) -> Event | None:
        assert self._length is not None
        window = min(self._length, len(self._buffer))
        start = max(0, self._searched - _OVERLAP)
        stray = _HEADER.search(self._buffer, start, window + _OVERLAP)
        if stray is not None and stray.start() < window:
            return self._cut(stray.start())
        if len(self._buffer) < self._length or self._header_may_follow(window):
            self._searched = window
            return None
        body = bytes(self._buffer[: self._length])
        del self._buffer[: self._length]
        self._length = None
        return Frame(body)

    def _header_may_follow(self, window: int) -> bool:
        """A body that is not a JSON object and ends in what may be the start of a header: the
        frame was cut short, so wait for that line to finish rather than swallow the next
        message (once it finishes, ``_body`` finds the header or delivers the body)."""
        if bytes(self._buffer[max(0, window - _OVERLAP) : window]).rstrip().endswith(b"}"):
            return False
        return any(
            self._buffer[at] in b"cC" and _could_be_header(bytes(self._buffer[at:]))
            for at in range(max(0, window - _OVERLAP), window)
        )

    def _cut(self, at: int) -> Event:
        """A header inside the declared body: the frame was shorter than it said."""
        body = bytes(self._buffer[:at])
        del self._buffer[:at]
        declared, self._length = self._length, None
        if not body.strip():
            return Problem(f"a frame declared {declared} bytes but held none")
        return Frame(body)  # whole JSON (a length that was too long) or a parse error reply
