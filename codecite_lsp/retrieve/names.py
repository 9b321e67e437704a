"""The names a query gives (pure): identifiers typed like code, in backticks, called, dotted,
or made of its words ("choice loader" -> ChoiceLoader); and whether a text holds them whole."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from functools import lru_cache

from ..core.memo import Memo
from ..core.terms import STOP_WORDS, identifier_parts, says, stem, whole_word, word_parts
from .weights import WEIGHTS

_BACKTICKED = re.compile(r"`([^`\s]+)`")
# Each starts only where a word starts: tried inside a word as well, a long word without a dot
# (or call parentheses) after it cost a scan to its end per character, quadratic time under the
# GIL (a 30,000-character history question froze the server).
_DOTTED = re.compile(r"(?<!\w)[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_CALLED = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)\(\)")
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


def qualifiers(query: str) -> set[str]:
    """The qualifying parts of the query's dotted names (``Session`` of ``Session.send``): they
    say whose name it is, not what is asked about."""
    return {part for dotted in _DOTTED.findall(query) for part in dotted.split(".")[:-1]}


def named_in(query: str) -> tuple[set[str], set[str]]:
    """Names a query gives: identifiers (typed like code, in backticks, or called: ``f()``), and
    the plain words that may also name a definition (as typed, lower case and capitalised)."""
    named = set(identifiers(query))
    for quoted in _BACKTICKED.findall(query):
        named.update(part for part in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", quoted))
    named.update(_CALLED.findall(query))
    for dotted in _DOTTED.findall(query):
        named.update(dotted.split("."))  # Data.Render, requests.sessions
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", query)
    worded: set[str] = set()
    for word in words:
        if len(word) >= 3 and word.lower() not in STOP_WORDS and word not in named:
            worded.update({word, word.lower(), _capital(word)})
    # Words that name a definition together: "choice loader" -> ChoiceLoader, choice_loader;
    # "HTTP client" -> HTTPClient and HttpClient.
    for size in (2, 3):
        for start in range(len(words) - size + 1):
            run = words[start : start + size]
            if all(w.isalpha() and w.lower() not in STOP_WORDS for w in run):
                lower = [w.lower() for w in run]
                named.update(
                    {
                        "".join(map(_capital, run)),
                        # an acronym is one word in a name: "JSON object" -> JsonObject
                        "".join(map(_capital, lower)),
                        "_".join(lower),
                        "_" + "_".join(lower),  # a private helper: _keep_alive
                        lower[0] + "".join(map(_capital, lower[1:])),
                    }
                )
    return named, worded - named


def given_names(query: str) -> set[str]:
    """The names a query gives as typed, to find their definitions first: identifiers, names
    in backticks, called or dotted (the last part), and a query of one word (`Router`,
    `Depends`: a look-up). Not the names guessed from its words (:func:`named_in`)."""
    given = set(identifiers(query))
    for quoted in _BACKTICKED.findall(query):
        given.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", quoted))
    given.update(_CALLED.findall(query))
    given.update(dotted.rsplit(".", 1)[-1] for dotted in _DOTTED.findall(query))
    words = query.split()
    if len(words) == 1 and _IDENTIFIER_LIKE.fullmatch(words[0]) and len(words[0]) >= 2:
        given.add(words[0].rsplit(".", 1)[-1])
    return given


def _capital(word: str) -> str:
    return word[:1].upper() + word[1:]


def exact_share(names: set[str], text: str) -> float | None:
    """Share of the identifiers the user typed that occur whole in the text (None: none typed)."""
    if not names:
        return None
    return sum(whole_word(name, text) for name in names) / len(names)


# Statements that make names of another module this module's own, the names captured (never
# the module's path: `export {x} from './hooks.js'` does not re-export `hooks` or `js`): Rust's
# `pub use` (its last segment or braces), an ECMAScript `export {...}`, CommonJS
# `module.exports = {...}`, and a Python package's relative imports (in ``__init__.py`` only:
# elsewhere they are plain imports).
_REEXPORT = re.compile(
    r"\bpub(?:\([^)]*\))?\s+use\s+(?:[\w:]*::)?(\{[^;]*\}|\w+)\s*(?:as\s+\w+\s*)?;"
    r"|\bexport\s+(?:type\s+)?\{([^}]*)\}"
    r"|\bmodule\.exports\s*=\s*\{([^}]*)\}"
)
_PACKAGE_IMPORT = re.compile(r"^from\s+\.[\w.]*\s+import\s+(\([^)]*\)|[^\n]*)", re.MULTILINE)


def reexported(names: Collection[str], path: str, text: str) -> set[str]:
    """The ``names`` that ``text`` re-exports (:data:`_REEXPORT`): where a name the index does
    not define (`FromRequest`, from a dependency) is made part of this module's API."""
    if not names:
        return set()
    lists = [next(filter(None, m.groups()), "") for m in _REEXPORT.finditer(text)]
    if path.endswith("__init__.py"):
        lists += [m.group(1) for m in _PACKAGE_IMPORT.finditer(text)]
    said = " ".join(lists)
    return {name for name in names if whole_word(name, said)} if said else set()


@lru_cache(maxsize=16384)
def words_of(text: str) -> frozenset[str]:
    """``word_parts`` of a chunk's text or a name, as a set, remembered: the same chunks come
    back query after query, and splitting their text was a third of a question's retrieval."""
    return frozenset(word_parts(text))


# ---------------------------------------------------------------------------------------------
# How well a chunk's own definitions are named by the question (the name field of BM25F: the
# defined name says what the code is for, its body says how, and a blanked or terse body holds
# few of the question's words).

_SEGMENT_MAX = 24  # longer lower-case runs are not compounds worth splitting
_MEMO_MAX = 100_000  # names, and their parts, remembered by Compounds


class NameMatch:
    """How well the question names a chunk's own definitions, in [0, 1]: the best of the
    defined names, each scored by the idf-weighted share of the question's ``terms`` it says,
    times how much of the name they cover. A lower-case compound (`splitext`, `fromkeys`,
    `getcwd`) counts as its words (``split``: :class:`Compounds`) when one of them is a question
    term. One per question: each name and word is compared with the terms once (a question
    scores a few thousand names, most of them many times)."""

    def __init__(self, terms: Mapping[str, float], split: Compounds) -> None:
        self.terms = terms
        self.split = split
        self.total = sum(terms.values())
        self._names: dict[str, float] = {}
        self._said: dict[str, frozenset[str]] = {}

    def __call__(self, defines: Collection[str]) -> float:
        if not self.total:
            return 0.0
        best = 0.0
        for name in defines:
            score = self._names.get(name)
            if score is None:
                score = self._names[name] = self._score(name)
            best = max(best, score)
        return best

    def _score(self, name: str) -> float:
        pieces = self._pieces(name)
        if not pieces:
            return 0.0
        said_by = [self._said_by(piece) for piece in pieces]
        said = frozenset().union(*said_by)
        covered = sum(bool(terms) for terms in said_by) / len(pieces)
        share = sum(self.terms[t] for t in said) / self.total
        precision = WEIGHTS.name_precision
        return share * (1 - precision + precision * covered)

    def _said_by(self, piece: str) -> frozenset[str]:
        """The terms ``piece`` says, either way round: `timeout` says "time", `time` says
        "timeout"."""
        found = self._said.get(piece)
        if found is None:
            found = self._said[piece] = frozenset(
                t for t in self.terms if says(piece, t) or says(t, piece)
            )
        return found

    def _pieces(self, name: str) -> list[str]:
        pieces: list[str] = []
        for whole, words in self.split.parts(name):
            if not self.terms.keys().isdisjoint(words):
                pieces.extend(word for word in words if word not in STOP_WORDS)
            elif whole:
                pieces.append(whole)
        return pieces


class Compounds:
    """Splits a lower-case compound into the fewest words the corpus knows (``getcwd`` ->
    get, cwd; ``ismount`` -> is, mount), remembered: the same names come back
    question after question. A word that cannot be split so stays whole."""

    def __init__(self, known: Callable[[str], bool]) -> None:
        self.known = known
        self._names = Memo(self._parts_of, _MEMO_MAX)
        self._words = Memo(self._words_of, _MEMO_MAX)  # a part's words: parts recur across names

    def __call__(self, word: str) -> list[str]:
        return self._split(word)

    def parts(self, name: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each part of ``name`` (``winfo_screenwidth``: winfo, screenwidth) as (its stem, or
        "" for a function word; the words it splits into, or none), remembered."""
        return self._names[name]

    def _parts_of(self, name: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return tuple(
            ("" if low in STOP_WORDS else stem(low), self._words[low])
            for part in identifier_parts(name)
            for low in [part.lower()]
            if len(low) >= 2 and not low.isdigit()
        )

    def _words_of(self, part: str) -> tuple[str, ...]:
        """The words ``part`` splits into, or none."""
        words = self._split(part)
        return tuple(words) if len(words) > 1 else ()

    def _split(self, word: str) -> list[str]:
        if len(word) > _SEGMENT_MAX:
            return [word]
        best: list[list[str] | None] = [[], *([None] * len(word))]
        for end in range(2, len(word) + 1):
            # the whole word is no piece (`taropen` is known, and still tar + open); a piece
            # has 3+ letters unless a function word (`is`, `get`): `re` + `set` is no split
            for start in range(1 if end == len(word) else 0, end - 1):
                before = best[start]
                if before is None:
                    continue
                piece = stem(word[start:end])
                current = best[end]
                if (current is None or len(before) + 1 < len(current)) and (
                    piece in STOP_WORDS or (end - start >= 3 and self.known(piece))
                ):
                    best[end] = [*before, piece]
        found = best[len(word)]
        return found if found and len(found) > 1 else [word]
