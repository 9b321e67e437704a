"""Which queries are about the project's packaging (retrieve/manifests.py)."""

from __future__ import annotations

import pytest

from codecite_lsp.retrieve.manifests import asks_packaging


@pytest.mark.parametrize(
    "query",
    [
        "Allow charset normalizer >=2 and <3",
        "Allow idna 3.x to be installed on Python 3.x",
        "Drop support for Python 3.9",
        "Add 3.12 classifier and tox configuration",
        "Migrate build system to PEP 517",
        "Limit dependencies to major instead of minor",
        "require Node 18 or later",
        "Which Python versions does it support?",
        "what dependencies does it need installed",
    ],
)
def test_packaging_questions_are_told(query: str) -> None:
    assert asks_packaging(query)


@pytest.mark.parametrize(
    "query",
    [
        "how are nested and sub-dependencies resolved",
        "how does dependency injection work",
        "remove unused Context dependency in get method",
        "Document HTTP/2 requirement for onUploadProgress on HTTPS",
        "How does HTTP/1.1 keep-alive work",
        "retry when attempts >= 3",  # a comparison in words, not a version range
        "if x < 0 raise",
        "which dependencies are injected and required by the handler",
        "how does the go version of the router differ",
    ],
)
def test_questions_about_the_code_are_not(query: str) -> None:
    assert not asks_packaging(query)
