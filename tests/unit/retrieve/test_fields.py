"""BM25F over a chunk's fields (:mod:`codecite_lsp.retrieve.fields`): where a word is said
decides what it is worth, not only how often."""

from __future__ import annotations

from codecite_lsp.core.records import Chunk, content_hash
from codecite_lsp.ingest.chunking import chunk_text
from codecite_lsp.ingest.languages import LANGUAGES
from codecite_lsp.retrieve.fields import field_ranking, fields_of, split_text


def _chunk(path: str, text: str, defines: tuple[str, ...] = (), language: str = "python") -> Chunk:
    return Chunk(
        path=path,
        language=language,
        start_line=1,
        end_line=text.count("\n") + 1,
        start_byte=0,
        end_byte=len(text.encode()),
        symbol=defines[0] if defines else None,
        kind="function" if defines else "block",
        text=text,
        content_hash=content_hash(text),
        revision="r",
        defines=defines,
    )


def test_comments_docstrings_and_strings_are_fields_of_their_own() -> None:
    code, prose, strings = split_text(
        'def load(path):\n    """Read the settings."""\n'
        '    # cached\n    return open(path, "rb")\n',
        LANGUAGES["python"].lexicon,
    )
    assert "load" in code and "open" in code and "settings" not in code and "rb" not in code
    assert "settings" in prose and "cached" in prose
    assert '"rb"' in strings
    go_code, go_prose, go_strings = split_text(
        'x := y // why: "quoted"\nz := `raw`\n', LANGUAGES["go"].lexicon
    )
    assert "quoted" in go_prose and "`raw`" in go_strings and "why" not in go_code


def test_the_chunk_named_for_the_words_beats_one_repeating_them_in_messages() -> None:
    # One bag of words ranks the messages first: they say "token bucket refill" six times.
    named = _chunk(
        "limits/token_bucket.py",
        "def refill(bucket, now):\n    bucket.level = min(bucket.size, bucket.level + now)\n",
        ("refill",),
    )
    messages = _chunk(
        "app/messages.py",
        "MESSAGES = [\n"
        + "".join(
            f"    'token bucket refill {n}: the token bucket refill said',\n" for n in range(3)
        )
        + "]\n",
    )
    chunks = {"named": named, "messages": messages}
    assert field_ranking(chunks, "token bucket refill", lambda word: 1.0) == ["named", "messages"]
    counts = fields_of(named).counts
    assert counts["name"]["token"] == 1 and counts["defines"]["refill"] == 1


def test_a_chunk_without_any_of_the_words_is_not_ranked() -> None:
    chunks = {"other": _chunk("a/other.py", "def other():\n    return 1\n", ("other",))}
    assert field_ranking(chunks, "token bucket", lambda word: 1.0) == []


def test_toml_and_yaml_comments_are_prose_not_code() -> None:
    # Both are plain text to the chunker (chunk language "text"); their comments open with "#".
    for path, text in (
        ("config/app.toml", '# rotate the signing secret weekly\nkey = "value"\n'),
        ("deploy/app.yaml", "# rotate the signing secret weekly\nkey: value\n"),
        ("deploy/app.yml", "key: value  # rotate the signing secret weekly\n"),
    ):
        [chunk] = chunk_text(path, text, revision="r")
        counts = fields_of(chunk).counts
        assert counts["prose"]["secret"] == counts["prose"]["weekli"] == 1, (path, counts)
        assert counts["code"]["secret"] == counts["code"]["weekli"] == 0, (path, counts)
        assert counts["code"]["key"] == 1, (path, counts)
