"""One word rule (core/terms.py): retrieval's exact names, the support check and the quote rule
agree on where a name starts and ends, for `$` names (PHP, JavaScript), names in any script,
snake_case and dotted paths."""

from __future__ import annotations

import re

import pytest

from codecite_lsp.core.terms import WORD_CLASS, whole_word, word_char
from codecite_lsp.retrieve.names import exact_share
from codecite_lsp.verify.quotes import quote_problem
from codecite_lsp.verify.support import Evidence

CASES = [
    ("$user", "echo $user;", True),
    ("user", "$user = load();", False),  # PHP's `$user` is one word
    ("$el", "const $el = $(node);", True),
    ("größe", "größe = 3", True),
    ("max", "maxö = 3", False),  # a letter is a letter in any script
    ("переменная", "переменная = 1", True),
    ("переменна", "переменная = 1", False),
    ("a_b", "x = a_b + 1", True),
    ("a_b", "x = a_bc + 1", False),
    ("a_b", "x = xa_b + 1", False),
    ("foo.bar", "foo.bar()", True),
    ("bar", "foo.bar()", True),
    ("foo", "foo.bar()", True),
]


@pytest.mark.parametrize(("name", "text", "whole"), CASES)
def test_retrieval_the_support_check_and_the_quote_rule_agree(
    name: str, text: str, whole: bool
) -> None:
    retrieval = exact_share({name}, text) == 1.0
    support = Evidence(text).has_word(name)
    quoted = quote_problem(name, [text]) is None
    assert (whole_word(name, text), retrieval, support, quoted) == (whole,) * 4


@pytest.mark.parametrize("char", list("aZ9_$ößя字١") + list(" .-()'\"\t+/\\"))
def test_a_word_character_is_the_patterns_word_class(char: str) -> None:
    assert word_char(char) == bool(re.fullmatch(rf"[{WORD_CLASS}]", char))
