"""Lone surrogates in a JSON message made U+FFFD; everything else byte for byte as it came."""

from __future__ import annotations

import json

import pytest

from codecite_lsp.core.surrogates import without_lone_surrogates


@pytest.mark.parametrize(
    "message",
    [
        b'{"path": "caf\\u00e9.py"}',
        b'{"emoji": "\\ud83d\\ude00"}',  # a valid pair is one character
        b'{"text": "\\\\udcff"}',  # an escaped backslash, then letters
        b"not json \\udcff",
        b'{"path": "\xff.py"}',  # not UTF-8: the parser's own rules apply
    ],
)
def test_what_holds_no_lone_surrogate_is_left_as_it_is(message: bytes) -> None:
    assert without_lone_surrogates(message) is message


def test_each_lone_surrogate_becomes_u_fffd_keys_and_nested_values_included() -> None:
    message = b'{"\\udcff": ["a\\udcffb", {"q": "\\ud800\\ud83d\\ude00"}], "n": 1}\n'
    cleaned = without_lone_surrogates(message)
    assert cleaned.endswith(b"\n")
    assert json.loads(cleaned) == {"\ufffd": ["a\ufffdb", {"q": "\ufffd\U0001f600"}], "n": 1}
