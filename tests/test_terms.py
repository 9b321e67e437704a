"""The shared word model: what counts as a term of a question or of code."""

from codecite_lsp.terms import stem, word_parts


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
