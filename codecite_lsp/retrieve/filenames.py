"""A file named for the concept (pure): how much of a file's own name the query says.

A small single-purpose file is often named for what it does (`cors.go`, `body_proxy.rb`,
`JsonArray.java`, `urlmap.rb`) and says the query's words fewer times than a large central file
that mentions them in passing. Its name is evidence the text cannot give: ``search`` lifts its
chunks by ``file_name`` times the share of the name's words the query says. A name that says
nothing of its module (`mod.rs`, `index.ts`, `__init__.py`) is read as its folder's name.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import lru_cache

from ..core.terms import says, word_parts

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


def name_share(path: str, query_words: Collection[str]) -> float:
    """The share of the file name's words that the query says (either way round: `urlmap`
    says "url", "mapping" says `map`), in [0, 1]."""
    words = file_words(path)
    if not words or not query_words:
        return 0.0
    said = sum(1 for w in words if any(says(w, t) or says(t, w) for t in query_words))
    return said / len(words)
