"""The frame reader: every kind of broken frame costs only itself, however the bytes arrive."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codecite_lsp.lsp.frames import MAX_BODY_BYTES, Frame, FrameParser, Problem

GOOD = b'{"jsonrpc": "2.0", "id": 9, "method": "codecite/status"}'


def frame(body: bytes, length: int | None = None, header=b"Content-Length", eol=b"\r\n") -> bytes:
    return header + b": %d" % (len(body) if length is None else length) + eol + eol + body


def feed_in_pieces(data: bytes, step: int) -> list[Frame | Problem]:
    parser = FrameParser()
    events: list[Frame | Problem] = []
    for start in range(0, len(data), step):
        events += parser.feed(data[start : start + step])
    return events


BAD = {
    "lower-case header": frame(b'{"id": 1}', header=b"content-length"),
    "LF-only line ends": frame(b'{"id": 1}', eol=b"\n"),
    "non-numeric length": b"Content-Length: abc\r\n\r\n{}",
    "length too short": frame(b'{"id": 1, "x": "yyyyyy"}', length=5),
    "length too long": frame(b'{"id": 1}', length=500),
    "truncated frame": frame(b'{"id": 1}')[:-4],
    "absurd length": frame(b'{"id": 1}', length=2_000_000_000),
    "length 10^12": frame(b'{"id": 1}', length=10**12),
    "garbage": b"hello world\r\n\r\n",
    "zero length": frame(b"", length=0),
    "body not JSON": frame(b"abc"),
    "no blank line": b'Content-Length: 9\r\n{"id": 1}',
    "long header line": b"Content-Length: 5\r\nX-Junk: " + b"a" * 10_000 + b"\r\n",
}


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("step", [1, 7, 4096])
def test_the_next_frame_survives_a_bad_one(name: str, step: int):
    events = feed_in_pieces(BAD[name] + frame(GOOD), step)
    frames = [event.body for event in events if isinstance(event, Frame)]
    assert frames[-1] == GOOD


def test_headers_are_case_insensitive_and_other_headers_ignored():
    data = b"content-length: %d\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n" % len(GOOD)
    assert FrameParser().feed(data + GOOD) == [Frame(GOOD)]


def test_an_absurd_length_is_refused_before_reading_the_body():
    events = FrameParser().feed(b"Content-Length: 1000000000000\r\n\r\n")
    assert events == [
        Problem(f"refused a Content-Length of 1000000000000 bytes (at most {MAX_BODY_BYTES})")
    ]


def test_text_that_mentions_a_header_inside_a_json_string_is_not_a_header():
    body = json.dumps({"id": 1, "q": "Content-Length: 5\r\n"}).encode()  # escaped: no raw CR LF
    assert FrameParser().feed(frame(body)) == [Frame(body)]


@settings(max_examples=200, deadline=None)
@given(junk=st.binary(max_size=300), step=st.integers(1, 64))
def test_any_junk_before_a_frame_never_loses_the_frame_after_it(junk: bytes, step: int):
    """Junk ends with a line end, as a broken frame's leftovers do before the next header."""
    events = feed_in_pieces(junk + b"\r\n" + frame(GOOD) + frame(GOOD), step)
    assert [event.body for event in events if isinstance(event, Frame)][-1:] == [GOOD]
