"""The language table (:mod:`codecite_lsp.ingest.languages`): every record complete, its query
compiling against its grammar, and a fixture of the language chunked along its definitions.

Adding a language is one record, one ``queries/<name>.scm`` and one fixture in
``tests/fixtures/polyglot`` (CONTRIBUTING.md); these tests fail until all three are there."""

from __future__ import annotations

import dataclasses
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from codecite_lsp.ingest.chunking import chunk_text
from codecite_lsp.ingest.languages import (
    LANGUAGES,
    PLAIN,
    Language,
    language_for_path,
    lexicon_for_path,
    query_for,
)
from codecite_lsp.ingest.syntax import outline

POLYGLOT = Path(__file__).parents[2] / "fixtures" / "polyglot"
QUERIES = resources.files("codecite_lsp.ingest").joinpath("queries")
# Languages whose hover is not yet quiet on their keywords: no reserved words recorded.
NO_RESERVED_WORDS = {"bash"}
# The fields the checks below read: a new field of Language needs its check here too.
CHECKED = {
    "name", "extensions", "filenames", "query", "lexicon", "reserved", "definition_words",
    "modifiers", "contexts", "opening_tag", "nesting", "prose",
}  # fmt: skip
RECORDS = sorted(LANGUAGES.values(), key=lambda language: language.name)


def fixture_of(language: Language) -> Path:
    [path] = [p for p in POLYGLOT.iterdir() if language_for_path(p.name) == language.name]
    return path


def test_every_field_of_a_record_has_a_check() -> None:
    assert {field.name for field in dataclasses.fields(Language)} == CHECKED


@pytest.mark.parametrize("language", RECORDS, ids=lambda language: language.name)
def test_every_record_is_complete(language: Language) -> None:
    assert LANGUAGES[language.name] is language
    assert language.grammar() is not None  # the name is the language pack's grammar
    assert language.extensions
    for ending in (*language.extensions, *language.filenames):
        assert ending == ending.lower() and ending.strip() == ending and ending
    assert all(ending.startswith(".") for ending in language.extensions)
    for ending in language.extensions:
        assert language_for_path(f"src/x{ending}") == language.name
    for name in language.filenames:
        assert language_for_path(f"src/{name}") == language.name
    lexicon = language.lexicon
    assert lexicon.line_comment.strip() and '"' in lexicon.quotes
    assert set(lexicon.quotes) <= set("\"'`")
    if language.prose:
        assert not (language.reserved or language.definition_words or language.modifiers)
        assert lexicon == PLAIN
    else:
        assert language.definition_words
        assert bool(language.reserved) != (language.name in NO_RESERVED_WORDS)
    for word in (*language.reserved, *language.definition_words, *language.modifiers):
        assert word.strip() == word and " " not in word and word
    for prefix, suffix in language.contexts:
        assert prefix or suffix
    assert language.opening_tag == language.opening_tag.lstrip()
    if language.nesting is not None:
        assert language.nesting.most > 0


def test_no_extension_or_file_name_belongs_to_two_languages() -> None:
    endings = Counter(e for lang in RECORDS for e in (*lang.extensions, *lang.filenames))
    assert [ending for ending, count in endings.items() if count > 1] == []


@pytest.mark.parametrize("language", RECORDS, ids=lambda language: language.name)
def test_every_query_exists_and_compiles_against_its_grammar(language: Language) -> None:
    assert QUERIES.joinpath(language.query).is_file()
    assert query_for(language.name).pattern_count > 0


def test_every_query_file_belongs_to_a_record() -> None:
    files = {entry.name for entry in QUERIES.iterdir() if entry.name.endswith(".scm")}
    assert files == {language.query for language in RECORDS}


@pytest.mark.parametrize("language", RECORDS, ids=lambda language: language.name)
def test_every_language_has_a_fixture_chunked_along_its_definitions(language: Language) -> None:
    path = fixture_of(language)
    text = path.read_text(encoding="utf-8")
    defined = {definition.symbol for definition in outline(path.name, text)}
    chunks = chunk_text(f"pkg/{path.name}", text, revision="r", budget=250)
    assert {chunk.language for chunk in chunks} == {language.name}
    assert any(chunk.symbol in defined for chunk in chunks), [c.symbol for c in chunks]


LINE_COMMENTS = [
    ("a.py", "#"), ("a.go", "//"), ("init.lua", "--"), ("notes.txt", "//"),
    ("Cargo.toml", "#"), ("ci.yml", "#"), ("a.yaml", "#"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "comment"), LINE_COMMENTS)
def test_a_path_s_lexicon_is_its_language_s_or_its_format_s(path: str, comment: str) -> None:
    assert lexicon_for_path(path).line_comment == comment
