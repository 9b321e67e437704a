"""Fields, not one bag of words (pure): BM25F over a chunk's fields.

The full-text index holds one bag of words per chunk, so a word in a file's name, in the name a
chunk defines, in a comment or in an error message all count the same, and a long chunk that
says the words in passing competes with the small file named for them. Here each candidate the
index found is split into fields: the file's name, its folders, the names the chunk defines,
the identifiers its code uses, its comments and docstrings, and its string literals. A query
term's frequency is weighed per field and normalised by that field's length against the pool's
average, then saturated once (BM25F: Robertson, Zaragoza and Taylor, 2004), so that a word the
name and the definition say is worth more than the same word repeated in a body. Names are not
length-normalised at all and code most (``fields_b``): a file's or a definition's name is short
by nature, so a small single-purpose file keeps the full weight of its name, and a long chunk
loses only what its code's length says. Only a query in words is ranked by its fields: one
that types identifiers is decided by the chunks that hold them (:mod:`.retriever`).

Which text is comment or string is read by a lexer, not a parser, from the file's lexicon in
the language table (its line-comment marker and quote characters; TOML and YAML, plain text to
the chunker, have one too): a rare misread moves one word to another field, never a chunk out
of the results.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from ..core.records import Chunk
from ..core.terms import word_parts
from ..ingest.languages import Lexicon, lexicon_for_path
from .filenames import file_words
from .weights import WEIGHTS

FIELDS = ("name", "path", "defines", "code", "prose", "strings")


@lru_cache(maxsize=64)
def _lexer(lexicon: Lexicon) -> re.Pattern[str]:
    """The lexicon's line comments and strings; block comments (``/* */``) and triple-quoted
    docstrings are read for every language."""
    line = lexicon.line_comment
    strings = [r'"(?:[^"\\\n]|\\.)*"']
    if "'" in lexicon.quotes:
        strings.append(r"'(?:[^'\\\n]|\\.)*'")
    if "`" in lexicon.quotes:
        strings.append(r"`[^`]*`")
    # Every match opens with one of these: the lookahead skips other positions without trying
    # each alternative there (the lexer was most of a chunk's fields).
    opening = re.escape("".join(sorted({'"', "'", "/", "`", line[0]})))
    return re.compile(
        rf"(?=[{opening}])"
        r'(?:(?P<doc>"""[\s\S]*?(?:"""|$)|\'\'\'[\s\S]*?(?:\'\'\'|$)|/\*[\s\S]*?(?:\*/|$)'
        rf"|{re.escape(line)}[^\n]*)|(?P<str>{'|'.join(strings)}))"
    )


@dataclass(frozen=True, slots=True)
class Fields:
    """The stemmed words of each field of one chunk, counted, and each field's length."""

    counts: Mapping[str, Counter[str]]
    lengths: Mapping[str, int]


def split_text(text: str, lexicon: Lexicon) -> tuple[str, str, str]:
    """(code, prose, strings): ``text`` with its comments and docstrings, and its string
    literals, taken out into the other two."""
    code: list[str] = []
    prose: list[str] = []
    strings: list[str] = []
    at = 0
    for match in _lexer(lexicon).finditer(text):
        code.append(text[at : match.start()])
        (prose if match.lastgroup == "doc" else strings).append(match.group())
        at = match.end()
    code.append(text[at:])
    return " ".join(code), " ".join(prose), " ".join(strings)


@lru_cache(maxsize=16384)
def _fields(path: str, text: str, defines: tuple[str, ...], symbol: str | None) -> Fields:
    code, prose, strings = split_text(text, lexicon_for_path(path))
    folders = path.split("/")[:-1]
    words = {
        "name": list(file_words(path)),
        "path": word_parts(" ".join(folders)),
        "defines": word_parts(" ".join(dict.fromkeys([*defines, (symbol or "").rsplit(".")[-1]]))),
        "code": word_parts(code),
        "prose": word_parts(prose),
        "strings": word_parts(strings),
    }
    return Fields(
        counts={f: Counter(w) for f, w in words.items()},
        lengths={f: len(w) for f, w in words.items()},
    )


def fields_of(chunk: Chunk) -> Fields:
    """The chunk's fields (remembered: the same chunks answer many queries)."""
    return _fields(chunk.path, chunk.text, chunk.defines, chunk.symbol)


def average_lengths(pool: Iterable[Fields]) -> dict[str, float]:
    """Each field's mean length over the candidates (at least 1)."""
    items = list(pool)
    return {f: max(1.0, sum(x.lengths[f] for x in items) / max(1, len(items))) for f in FIELDS}


def bm25f(terms: Mapping[str, float], fields: Fields, average: Mapping[str, float]) -> float:
    """BM25F of one chunk: per term, the field-weighted, length-normalised frequency saturated
    by ``fields_k1`` and weighed by the term's idf (``terms``: word -> idf)."""
    weights, b, k1 = WEIGHTS.fields, WEIGHTS.fields_b, WEIGHTS.fields_k1
    score = 0.0
    for term, idf in terms.items():
        tf = 0.0
        for field in FIELDS:
            count = fields.counts[field].get(term)
            if count:
                norm = 1.0 - b[field] + b[field] * fields.lengths[field] / average[field]
                tf += weights[field] * count / norm
        if tf:
            score += idf * tf / (k1 + tf)
    return score


def field_ranking(
    chunks: Mapping[str, Chunk], query: str, idf: Callable[[str], float]
) -> list[str]:
    """The candidates holding a query term, best BM25F first (ties: by id, stably)."""
    terms = {word: idf(word) for word in dict.fromkeys(word_parts(query))}
    if not terms:
        return []
    split = {key: fields_of(chunk) for key, chunk in chunks.items()}
    average = average_lengths(split.values())
    scored = {key: bm25f(terms, f, average) for key, f in split.items()}
    return sorted((k for k, v in scored.items() if v > 0), key=lambda k: (-scored[k], k))
