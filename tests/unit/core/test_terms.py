"""The shared word model: what counts as a term of a question or of code."""

import pytest

from codecite_lsp.core.terms import assignment, says, stem, terms_said, word_parts


def test_identifiers_split_in_both_styles_and_questions_lose_their_scaffolding() -> None:
    assert word_parts("How are API keys rotated? rotate_key keyId") == [
        "api", "key", "rotat", "rotat", "key", "key", "id",
    ]  # fmt: skip
    assert word_parts("rotateKey HTTPServer2 x") == ["rotat", "key", "http", "server"]
    assert word_parts("what is the function of this class and file") == []


def test_inflections_meet_at_one_stem() -> None:
    assert {stem(w) for w in ["rotate", "rotated", "rotation", "rotates"]} == {"rotat"}
    assert stem("class") == stem("classes") == "class"
    assert stem("boxes") == "box"
    assert stem("sss") == "sss"  # too short to strip
    # a doubled consonant before -ing/-ed is one letter of the word
    assert {stem(w) for w in ["map", "mapping", "mapped"]} == {"map"}
    assert stem("formatting") == stem("format") and stem("setting") == stem("set")
    assert stem("added") == stem("add") == "add"  # a short word keeps its double letter
    assert stem("filled") == "fill"  # 'll' is the word's own
    # -ization meets -ize; a word ending in -us or -is keeps its s
    assert stem("serialization") == stem("serialize") == stem("serialized")
    assert stem("status") == stem("statuses") == "status"
    assert stem("analysis") == "analysis"


def test_a_compound_says_the_word_it_starts_with_but_another_word_does_not() -> None:
    # "times"/"timed" stem to "tim"; the code says "timeout" (TimeoutError, wait_for(timeout=)).
    assert says("timeout", stem("times")) and says("timeout", stem("timed"))
    assert says("key", "key")
    assert not says("timer", stem("times"))  # an inflection stem missed, not a compound
    assert not says("tim", "timeout")  # the other way round: the question asked for more
    assert not says("at", "a")  # too short to be a compound's head


def test_the_terms_a_chunks_words_say_are_those_says_finds_word_by_word() -> None:
    words = {"timeout", "key", "timer", "at", "retrying"}
    terms = ["tim", "key", "tim", "retr", "a", "ke", "timeou", "xyz"]
    expected = {t for t in terms if any(says(w, t) for w in words)}
    assert terms_said(terms, words) == expected == {"tim", "key", "retr"}
    assert terms_said(terms, set()) == set()


def test_a_final_y_and_its_plural_and_past_meet() -> None:
    # "How are retries handled?" asks about `retry`; "entries" about `entry`.
    assert {stem(w) for w in ["retry", "retries", "retried", "retrying"]} == {"retri"}
    assert stem("query") == stem("queries") == stem("queried")
    assert stem("dependency") == stem("dependencies")
    assert stem("cookie") == stem("cookies")  # an -ie noun still meets its plural
    assert stem("key") == stem("keys") == "key"  # a vowel before the y: the word's own
    assert says("retryable", stem("retries"))  # the compound keeps its y
    assert terms_said({stem("retries")}, ["retryable", "timer"]) == {stem("retry")}


@pytest.mark.parametrize(
    ("line", "name", "gives"),
    [
        ("TOKEN_TTL = 24 * 3600", "TOKEN_TTL", True),
        ("var res = Object.create(http.ServerResponse.prototype)", "res", True),
        ("export const LIMIT: number = 3;", "LIMIT", True),
        ("\tptr := &value", "ptr", True),
        ("\tvar ptr *string", "ptr", True),  # declared without a value: Go
        ("  let ptr: string | undefined;", "ptr", True),  # TypeScript
        ("var ptr = require('ptr')", "ptr", False),  # an import
        ("ptr == other", "ptr", False),
        ("  if (ptr) {", "ptr", False),
        ("var ptrs []string", "ptr", False),  # another name
        ("        self.ptr: bool = False", "ptr", True),  # an attribute
        ("    this.ptr = null;", "ptr", True),
        ("        other.ptr = None", "ptr", False),  # another object's
    ],
)
def test_a_line_giving_a_name_its_value_or_declaring_it(line: str, name: str, gives: bool) -> None:
    assert (assignment(name).search(line) is not None) == gives


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("TOKEN_TTL = 24 * 3600", "TOKEN_TTL"),
        ("var res = Object.create(http.ServerResponse.prototype)", "res"),
        ("var ptr *string", "ptr"),
    ],
)
def test_a_module_level_value(line: str, name: str) -> None:
    assert assignment(name, top_level=True).search(line)
    assert not assignment(name, top_level=True).search("    " + line)  # a function's local
