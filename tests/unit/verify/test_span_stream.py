"""The incremental reader: a reply's spans as their objects complete, however the text is cut."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codecite_lsp.verify.span_stream import SpanReader

SPANS: list[Any] = [
    {"kind": "prose", "text": 'braces } ] and "quotes" \\ inside'},
    {"kind": "claim", "text": "x", "citations": [{"source": "S1", "quote": "a[0] = {}"}]},
    "not a span",
    12,
]
REPLY = json.dumps({"note": {"nested": [1, {"spans": "no"}]}, "spans": SPANS, "refuse": None})


def _read(text: str, sizes: list[int]) -> tuple[list[Any], SpanReader]:
    reader, found, at, number = SpanReader(), [], 0, 0
    while at < len(text):
        size = sizes[number % len(sizes)]
        found += reader.feed(text[at : at + size])
        at, number = at + size, number + 1
    return found, reader


@given(st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=6))
def test_every_span_is_found_whatever_the_chunks(sizes: list[int]) -> None:
    for text in (REPLY, f"  \n{REPLY} trailing words", f"Here:\n```json\n{REPLY}\n```\n"):
        assert _read(text, sizes)[0] == SPANS


def test_each_span_comes_as_its_object_closes() -> None:
    reader = SpanReader()
    assert reader.feed('{"spans": [{"kind": "prose", "text": "a"}') == [
        {"kind": "prose", "text": "a"}
    ]
    assert reader.feed(', {"kind": "prose", "text": "b"') == []
    assert reader.feed("}") == [{"kind": "prose", "text": "b"}]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"The answer: {REPLY}", []),  # cut out of words: a fence later would win
        (json.dumps({"answer": json.loads(REPLY)}), []),  # a wrapper: known only at its end
        (f"```python\nprint(1)\n```\n```json\n{REPLY}\n```", []),  # the first fence holds code
        (json.dumps({"spans": SPANS[:1]})[:-1] + ', "spans": SPANS}', SPANS[:1]),  # spans twice
    ],
)
def test_envelopes_it_cannot_follow_show_nothing_more(text: str, shown: list[Any]) -> None:
    assert _read(text, [5])[0] == shown


def test_a_refusal_before_the_spans_is_read() -> None:
    _, reader = _read(json.dumps({"refuse": "no sources", "spans": SPANS[:1]}), [4])
    assert reader.refused == "no sources"
