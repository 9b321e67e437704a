"""Names a language gives every file (``self``, ``this``, keywords, builtins): hovering one says
nothing about the repository, and its "uses" would be every line of it. The words are each
language's ``reserved`` in the language table."""

from __future__ import annotations

from .languages import LANGUAGES, language_for_path


def reserved(name: str, path: str) -> bool:
    """Whether ``name`` (its last component) is given by the language of ``path`` itself."""
    language = language_for_path(path)
    last = name.rsplit(".", 1)[-1]
    return language is not None and last in LANGUAGES[language].reserved
