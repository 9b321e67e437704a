"""A query's text and the facts of it the ranking reads, parsed once per request (pure): the
identifiers it types, the roles it asks for, whether it asks about packaging or what something
is, the names it gives. Each is worked out on first use and remembered."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..core.terms import asked_roles, word_parts
from .description import asks_what
from .legacy import asked_for
from .manifests import asks_packaging
from .names import given_names, identifiers, named_in, qualifiers, words_of


@dataclass(frozen=True)
class Query:
    text: str

    @property
    def blank(self) -> bool:
        return not self.text.strip()

    @property
    def one_word(self) -> bool:
        return " " not in self.text.strip()

    @functools.cached_property
    def names(self) -> set[str]:
        """The identifiers it types (:func:`.names.identifiers`)."""
        return identifiers(self.text)

    @functools.cached_property
    def names_only(self) -> bool:
        """Identifiers alone: a look-up, where a name lives matters more than its role."""
        return bool(self.names) and all(identifiers(word) for word in self.text.split())

    @functools.cached_property
    def words(self) -> list[str]:
        return word_parts(self.text)

    @functools.cached_property
    def packaging(self) -> bool:
        return asks_packaging(self.text)

    @functools.cached_property
    def asks_what(self) -> bool:
        return asks_what(self.text)

    @functools.cached_property
    def asked(self) -> frozenset[str]:
        """The roles beyond code it asks for: a packaging question's manifests whatever their
        role (`pyproject.toml` is configuration)."""
        asked = asked_roles(self.text)
        return asked | {"config"} if self.packaging else asked

    @functools.cached_property
    def named(self) -> tuple[set[str], set[str]]:
        """(the names it gives, the plain words that may name a definition): :func:`.named_in`."""
        return named_in(self.text)

    @functools.cached_property
    def given(self) -> set[str]:
        """The names it gives as typed (:func:`.names.given_names`)."""
        return given_names(self.text)

    @functools.cached_property
    def qualifying(self) -> frozenset[str]:
        """The words of its dotted names' qualifiers (`Session` of `Session.send`)."""
        return words_of(" ".join(qualifiers(self.text)))

    def asks_for(self, folder: str) -> bool:
        """It names ``folder`` (an old or duplicate tree, :func:`.legacy.asked_for`)."""
        return asked_for(folder, self.text)
