"""A file named for the concept (pure): how much of a file's own name the query says.

A small single-purpose file is often named for what it does (`cors.go`, `body_proxy.rb`,
`JsonArray.java`, `urlmap.rb`) and says the query's words fewer times than a large central file
that mentions them in passing. Its name is evidence the text cannot give: ``search`` lifts its
chunks by ``file_name`` times how well the name says the query (:func:`named_for`). A name that says
nothing of its module (`mod.rs`, `index.ts`, `__init__.py`) is read as its folder's name.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import lru_cache

from ..core.records import Chunk
from ..core.terms import says, word_parts
from .names import words_of
from .scoring import role_weight
from .weights import WEIGHTS

# File names that stand for their folder: the folder names the module.
_PLACEHOLDERS = frozenset(word_parts("mod index init main lib package"))


@lru_cache(maxsize=65536)
def file_words(path: str) -> tuple[str, ...]:
    """The words of a file's name (stemmed, as ``word_parts`` gives them), or of its folder's
    when the name is a placeholder."""
    parts = path.split("/")
    words = tuple(word_parts(parts[-1].split(".")[0]))
    if (not words or set(words) <= _PLACEHOLDERS) and len(parts) > 1:
        return tuple(word_parts(parts[-2]))
    return words


def name_share(
    path: str, query_words: Collection[str], phrase: Sequence[str] = ()
) -> tuple[float, frozenset[str]]:
    """How well the file's name says the query, in [0, 1]: the share of the name's words the
    query says (either way round: `urlmap` says "url", "mapping" says `map`), times half to all
    of it as the name says more of the query's words; and the query words it says. A name of
    two words or more that the query spells in order (``phrase``, the query's words as written:
    "JSON array operations" and `JsonArray.java`) says it wholly."""
    words = file_words(path)
    if not words or not query_words:
        return 0.0, frozenset()
    if len(words) > 1 and _spelled(words, phrase):
        return 1.0, frozenset(words)
    said = frozenset(t for t in query_words for w in words if says(w, t) or says(t, w))
    precision = sum(1 for w in words if any(says(w, t) or says(t, w) for t in said)) / len(words)
    return precision * (0.5 + 0.5 * len(said) / len(query_words)), said


def _spelled(words: Sequence[str], phrase: Sequence[str]) -> bool:
    size = len(words)
    return any(tuple(phrase[i : i + size]) == tuple(words) for i in range(len(phrase) - size + 1))


def named_for(chunk: Chunk, query_words: frozenset[str], phrase: Sequence[str] = ()) -> float:
    """:func:`name_share` of the chunk's file, times the share of the query's other words its
    text holds: a file named for one of the words whose text lacks the rest is about that word
    only (`tokens.py` for "token bucket refill")."""
    share, said = name_share(chunk.path, query_words, phrase)
    if not share:
        return 0.0
    rest = query_words - said
    return share * (len(rest & words_of(chunk.text)) / len(rest) if rest else 1.0)


def named_files(
    scores: dict[str, float], chunks: dict[str, Chunk], query: str, asked: frozenset[str]
) -> dict[str, float]:
    """The best chunk of each code file named for the query lifted by up to ``file_name``
    (:func:`.filenames.named_for`): the name ranks the file; its further chunks keep their own
    evidence. A test or a doc named for the concept is still not the code."""
    phrase = word_parts(query)
    words = frozenset(phrase)
    best: dict[str, str] = {}
    for key in sorted(scores, key=lambda key: (-scores[key], key)):
        best.setdefault(chunks[key].path, key)
    lifted = dict(scores)
    for key in best.values():
        if role_weight(chunks[key], asked) == 1.0:
            lifted[key] *= 1.0 + WEIGHTS.file_name * named_for(chunks[key], words, phrase)
    return lifted
