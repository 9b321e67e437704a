"""The words' memo computes each word once and never holds more than its bound (a long-lived
server reads repositories whose vocabularies run to hundreds of thousands of words)."""

from __future__ import annotations

from codecite_lsp.core.memo import Memo


def test_each_key_is_computed_once_until_the_bound_empties_the_memo() -> None:
    computed: list[str] = []

    def upper(word: str) -> str:
        computed.append(word)
        return word.upper()

    memo = Memo(upper, limit=3)
    assert [memo[w] for w in ["a", "b", "a", "c", "b"]] == ["A", "B", "A", "C", "B"]
    assert computed == ["a", "b", "c"]
    assert list(map(memo.__getitem__, ["d", "a"])) == ["D", "A"]  # full at "d": emptied first
    assert computed == ["a", "b", "c", "d", "a"]
    assert len(memo) == 2
