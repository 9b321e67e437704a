"""The names a query gives (pure): identifiers typed like code, in backticks, called, dotted,
or made of its words ("choice loader" -> ChoiceLoader); and whether a text holds them whole."""

from __future__ import annotations

import re
from functools import lru_cache

from ..core.terms import STOP_WORDS, word_parts

_BACKTICKED = re.compile(r"`([^`\s]+)`")
_IDENTIFIER_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def identifiers(question: str) -> set[str]:
    """Identifier-looking words of a question (snake_case, camelCase, dotted, or with digits):
    the user named something in the code, so an exact occurrence is strong evidence."""
    found = set()
    for word in _IDENTIFIER_LIKE.findall(question):
        for name in word.split("."):
            shaped = "_" in name.strip("_") or any(c.isdigit() for c in name)
            camel = any(c.isupper() for c in name[1:]) and any(c.islower() for c in name)
            if shaped or camel:
                found.add(name)
    return found


def named_in(query: str) -> tuple[set[str], set[str]]:
    """Names a query gives: identifiers (typed like code, in backticks, or called: ``f()``), and
    the plain words that may also name a definition (as typed, lower case and capitalised)."""
    named = set(identifiers(query))
    for quoted in _BACKTICKED.findall(query):
        named.update(part for part in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", quoted))
    named.update(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\(\)", query))
    for dotted in re.findall(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", query):
        named.update(dotted.split("."))  # Data.Render, requests.sessions
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", query)
    worded: set[str] = set()
    for word in words:
        if len(word) >= 3 and word.lower() not in STOP_WORDS and word not in named:
            worded.update({word, word.lower(), _capital(word)})
    # Words that name a definition together: "choice loader" -> ChoiceLoader, choice_loader.
    for size in (2, 3):
        for start in range(len(words) - size + 1):
            run = words[start : start + size]
            if all(w.isalpha() and w.lower() not in STOP_WORDS for w in run):
                lower = [w.lower() for w in run]
                named.update(
                    {
                        "".join(map(_capital, run)),
                        "_".join(lower),
                        "_" + "_".join(lower),  # a private helper: _keep_alive
                        lower[0] + "".join(map(_capital, lower[1:])),
                    }
                )
    return named, worded - named


def _capital(word: str) -> str:
    return word[:1].upper() + word[1:]


def whole_word(name: str, text: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) is not None


def exact_share(names: set[str], text: str) -> float | None:
    """Share of the identifiers the user typed that occur whole in the text (None: none typed)."""
    if not names:
        return None
    return sum(whole_word(name, text) for name in names) / len(names)


@lru_cache(maxsize=16384)
def words_of(text: str) -> frozenset[str]:
    """``word_parts`` of a chunk's text or a name, as a set, remembered: the same chunks come
    back query after query, and splitting their text was a third of a question's retrieval."""
    return frozenset(word_parts(text))
