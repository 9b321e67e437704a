"""What a file is for (code first) and how a question's words reach code's words."""

from __future__ import annotations

import pytest

from codecite_lsp.core.fulltext import inflections, query_terms, search_terms
from codecite_lsp.core.terms import asked_roles, role


@pytest.mark.parametrize(
    ("path", "language", "expected"),
    [
        ("src/click/core.py", "python", "code"),
        ("setup.py", "python", "code"),
        ("context_test.go", "go", "test"),
        ("tests/test_core.py", "python", "test"),
        ("docs/commands.md", "markdown", "doc"),
        ("docs/conf.py", "python", "doc"),
        ("README.rst", "text", "doc"),
        ("CHANGES.rst", "text", "changelog"),
        ("HISTORY.md", "markdown", "changelog"),
        ("examples/tutorial/app.py", "python", "example"),
        ("pyproject.toml", "text", "config"),
    ],
)
def test_every_file_has_a_role(path: str, language: str, expected: str) -> None:
    assert role(path, language) == expected


def test_a_question_asks_for_other_files_only_by_naming_them() -> None:
    assert asked_roles("How does click decide the parameter source?") == frozenset()
    assert asked_roles("How is retry tested?") == {"test"}
    assert asked_roles("Where is this documented in the docs?") == {"doc"}
    assert asked_roles("What does the changelog say about 8.1?") == {"changelog"}
    assert asked_roles("Is there an example of usage?") == {"example", "doc"}


def test_a_questions_word_reaches_the_codes_other_inflections() -> None:
    assert {"merge"} <= set(inflections("merging"))
    assert {"retry"} <= set(inflections("retried"))
    assert {"run"} <= set(inflections("running"))
    assert {"rotate"} <= set(inflections("rotation"))
    assert inflections("MaxRetries") == [] and inflections("api") == []
    # retry -> retries, Retry, max_retries: the question's term is among each one's terms
    for code in ("retries", "Retry", "max_retries", "merge"):
        indexed = set(search_terms(code, "a.py", None).split())
        assert indexed & set(query_terms("retry merging").split()), code
