"""Words of code and questions, one definition for every step that compares them: identifier
parts (snake_case and camelCase split), lower case, stop words dropped, lightly stemmed.

The embedder, the reranker's relevance floor and the extractive answerer all use these, so a
question term means the same thing at each step. The one word rule is here too
(:func:`whole_word`): retrieval's exact names, the support check, the quote rule and the offline
answerer agree on where a name starts and ends.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from functools import lru_cache
from itertools import chain

from .memo import Memo

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TEST_PATH = re.compile(
    r"(?:^|/)(?:tests?|__tests__|spec)/|(?:^|/)test_[^/]*$|_test\.\w+$|\.(?:test|spec)\.\w+$"
)
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

# Function words, question scaffolding and words every code chunk has: never evidence that a
# chunk answers a question.
STOP_WORDS = frozenset(
    """a about above after again all also am an and any are as at be been being both but by can
    could did do does doing done during each either else every few for from had has have having
    he her here hers him his how i if in into is it its itself just may me might more most much
    must my no nor not now of off on once only or other our out over own per please same shall
    she should show so some such tell than that the their them then there these they this those
    through thus to too under until up upon us very via was we were what when where whether which
    while who whom whose why will with within without would you your yours explain describe
    happen happens happening work works working get gets got make makes made use uses used using
    thing things way ways code function functions method methods class classes file files find
    mean means self def return import""".split()  # noqa: SIM905 - a word list reads better as prose
)


# A word character, for every "whole word" test: a letter or digit of any script (`größe`,
# `переменная`), `_`, or `$`, part of a name in PHP (`$user`) and JavaScript (`$el`). Inside a
# character class, so a pattern can add to it (`[\w$.]`: nor an attribute).
WORD_CLASS = r"\w$"
NOT_AFTER_WORD = rf"(?<![{WORD_CLASS}])"  # a pattern's start: no word character before it
NOT_BEFORE_WORD = rf"(?![{WORD_CLASS}])"  # a pattern's end: no word character after it


def word_char(char: str) -> bool:
    """Part of a word (:data:`WORD_CLASS`: the regex word class is ``str.isalnum`` and ``_``)."""
    return char.isalnum() or char in "_$"


@lru_cache(maxsize=4096)
def word_pattern(name: str, flags: int = 0) -> re.Pattern[str]:
    """``name`` as a whole word: no word character on either side."""
    return re.compile(rf"{NOT_AFTER_WORD}{re.escape(name)}{NOT_BEFORE_WORD}", flags)


def whole_word(name: str, text: str) -> bool:
    """Whether ``text`` holds ``name`` as a whole word (:func:`word_pattern`)."""
    # The substring test first: most texts do not hold the name at all, and the pattern (a
    # lookbehind first) is tried at every position of the text.
    return name in text and word_pattern(name).search(text) is not None


_VOWELS = frozenset("aeiouy")
_DOUBLED = frozenset("bdfgkmnprt")  # 'mapping' -> 'mapp' -> 'map'; not 'll', 'ss', 'zz'


def _doubled(word: str) -> bool:
    return word[-1] == word[-2] and word[-1] in _DOUBLED


def stem(word: str) -> str:
    """A deliberately tiny stemmer so 'rotated', 'rotates', 'rotation' and 'rotate' meet (and
    'mapping' and 'map', 'formatting' and 'format', 'serialization' and 'serialize', 'retries'
    and 'retry', 'queried' and 'query')."""
    for suffix in ("ions", "ion", "ings", "ing", "ed", "es", "s"):
        if not word.endswith(suffix) or len(word) - len(suffix) < 3:
            continue
        if suffix == "s" and word.endswith(("ss", "us", "is")):
            break
        if suffix == "es" and not word.endswith(("sses", "xes", "ches", "shes")):
            continue
        word = word[: -len(suffix)]
        if suffix.startswith("ion") and word.endswith(("izat", "isat")):
            word = word[:-2]  # serializat(ion) -> serializ(e)
        elif suffix.startswith(("ing", "ed")) and len(word) > 3 and _doubled(word):
            word = word[:-1]  # 'added' keeps its 'add'
        break
    if word.endswith("e") and len(word) > 3:
        return word[:-1]
    # A final y after a consonant is the i of its plural and past ('entry', 'entries' -> 'entri';
    # 'cookie', 'cookies' -> 'cooki' as before); 'key' and 'array' keep theirs.
    if word.endswith("y") and len(word) >= 3 and word[-2] not in _VOWELS:
        return word[:-1] + "i"
    return word


def identifier_parts(identifier: str) -> list[str]:
    """``rotateKey`` -> ['rotate', 'Key']; ``HTTPServer2`` -> ['HTTP', 'Server', '2']."""
    return _PART.findall(identifier)


def word_parts(text: str) -> list[str]:
    """Stemmed lower-case parts of every identifier in ``text``, in order, without stop words,
    one-letter parts and bare numbers."""
    # map and chain: no Python step per identifier (a chunk has hundreds; the default
    # embedding reads every chunk's twice)
    return list(chain.from_iterable(map(_identifier_words.__getitem__, IDENTIFIER.findall(text))))


def _split_identifier(identifier: str) -> tuple[str, ...]:
    """word_parts of one identifier."""
    parts = (part.lower() for part in _PART.findall(identifier))
    return tuple(
        stem(lower)
        for lower in parts
        if len(lower) > 1 and lower not in STOP_WORDS and not lower.isdigit()
    )


# Code repeats its identifiers: splitting and stemming them again was most of a question's
# reranking time and of the default embedding's (which reads every chunk twice).
_identifier_words = Memo(_split_identifier, 250_000)  # ~60 MB at most


def says(word: str, term: str) -> bool:
    """Whether the code word ``word`` says the question term ``term``: the same stem, or a
    compound that starts with it and goes on for a word of 3+ letters ('timeout' says 'tim',
    the stem of 'times' and 'timed'; 'timer' is another word; 'retryable' says 'retri', the stem
    of 'retry')."""
    return word == term or (len(term) >= 3 and _compound_of(term).match(word) is not None)


def terms_said(terms: Iterable[str], words: Collection[str]) -> set[str]:
    """The ``terms`` some of ``words`` says (:func:`says`): a term's longer words are found by
    one pattern over the words joined, not by comparing every word with it (a question's terms
    against each candidate's words was most of its rerank)."""
    found = set()
    joined: str | None = None
    for term in terms:
        if term in words:
            found.add(term)
        elif len(term) >= 3:
            joined = " ".join(words) if joined is None else joined  # no word holds a space
            if _compound_of(term).search(joined):
                found.add(term)
    return found


@lru_cache(maxsize=1024)
def _compound_of(term: str) -> re.Pattern[str]:
    """A word that starts with ``term`` and goes on for 3+ characters (:func:`says`); a stem's
    final i is the y its word has inside a compound."""
    head = re.escape(term[:-1]) + "[iy]" if term.endswith("i") else re.escape(term)
    return re.compile(rf"(?<!\S){head}\S{{3}}")


def assignment(name: str, *, top_level: bool = False) -> re.Pattern[str]:
    """A line giving ``name`` its value: `NAME = 24 * 3600`, `var res = ...`, `const NAME: T =`,
    an attribute's `self.name: bool = False` (`this.name =`), or declaring it without one:
    `var ptr *string`, `let done: boolean;` (a constant or variable the chunker's queries do not
    list as a definition; not an import, `var http = require('http')`); with ``top_level``, only
    at a line's start: module scope, not a function's local of that name."""
    indent = "" if top_level else r"[ \t]*"
    named = re.escape(name)
    return re.compile(
        rf"^{indent}(?:(?:export|pub)\s+)?(?:"
        rf"(?:(?:const|let|var|val|static)\s+|(?:self|this)\.)?{named}\s*(?::[^=\n]*)?="
        rf"(?!=)(?!\s*(?:await\s+)?(?:require|import)\s*\()"
        rf"|(?:let|var)\s+{named}{NOT_BEFORE_WORD}[^=\n]*$)",
        re.MULTILINE,
    )


def is_test_path(path: str) -> bool:
    """Whether ``path`` is a test (tests/, test_*.py, *_test.go, *.spec.ts, ...): tests restate
    what the code does, so a question about the code wants the code first."""
    return _TEST_PATH.search(path) is not None


# ---------------------------------------------------------------------------------------------
# What a file is for: code answers questions about behaviour; the rest is supporting evidence.

Role = str  # "code", "test", "doc", "changelog", "example", "config"

_CHANGELOG_NAME = re.compile(
    r"(?:^|/)(?:change[-_ ]?log|changes|history|news|release[-_ ]?notes|releases)(?:\.[^/]*)?$",
    re.IGNORECASE,
)
_DOC_DIR = re.compile(r"(?:^|/)(?:docs?|documentation|site|website|man)/", re.IGNORECASE)
_EXAMPLE_DIR = re.compile(
    r"(?:^|/)(?:examples?|samples?|demos?|tutorials?|benchmarks?|bench)/", re.IGNORECASE
)
_DOC_EXTENSIONS = (".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".html", ".ipynb")
_CODE_LANGUAGES_EXCLUDED = frozenset({"markdown", "text"})

# Words of a question that ask for something other than code, by role (compared as stems).
_ASKS_FOR: dict[Role, frozenset[str]] = {
    "test": frozenset({"test", "tested", "testing", "spec", "fixture", "pytest", "unittest"}),
    "doc": frozenset({"doc", "docs", "documentation", "documented", "readme", "guide", "usage"}),
    "changelog": frozenset({"changelog", "changelogs"}),
    "example": frozenset({"example", "examples", "sample", "demo", "tutorial", "usage"}),
    "config": frozenset({"config", "configuration", "setting", "settings", "install", "ci"}),
}


def role(path: str, language: str = "") -> Role:
    """What ``path`` is for: tests and examples by folder or name, changelogs by name, docs by
    folder or prose extension, configuration when it is neither code nor prose, else code."""
    if is_test_path(path):
        return "test"
    if _CHANGELOG_NAME.search(path):
        return "changelog"
    if _EXAMPLE_DIR.search(path):
        return "example"
    if _DOC_DIR.search(path) or path.lower().endswith(_DOC_EXTENSIONS) or language == "markdown":
        return "doc"
    if language in _CODE_LANGUAGES_EXCLUDED:
        return "config"  # a text file that is not prose: toml, yaml, json, ini, lock files
    return "code"


def asked_roles(question: str) -> frozenset[Role]:
    """The non-code roles a question asks for by name ("how is retry tested?" -> test)."""
    words = {word.lower() for word in IDENTIFIER.findall(question)}
    stems = words | {stem(word) for word in words}
    return frozenset(r for r, names in _ASKS_FOR.items() if stems & (names | set(map(stem, names))))


# Number words read as counts, two to twelve: "one" and "zero" are pronouns and idioms in prose
# far more than counts. The support check and the prose rule read the same list.
COUNT_WORDS: dict[str, int] = {
    word: value
    for value, word in enumerate(
        [
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ],
        start=2,
    )
}
