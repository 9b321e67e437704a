"""The full-text field: how chunks and queries become whitespace-separated terms (pure: no I/O).

LanceDB's own tokenizer splits on ``_``, so a query for ``ident_42`` would match ``ident_2``.
We tokenise ourselves and let the index split on whitespace only: every word is kept whole
(lower-cased), and an identifier also yields its parts and their light plural stems, so
``rotateKey``, ``rotate_key`` and ``auth/keys.py`` are all found by "rotate key" and "keys".
Dotted names (``os.path.join``, ``keys.py``) are a word of their own and also each of their
identifiers.

Building this field is a hot loop of a cold index run (every word of every chunk), hence the
memo of each distinct word's terms and the C-level tokenising of ASCII text.
"""

from __future__ import annotations

import re
import string

from .memo import Memo
from .terms import identifier_parts

# A single character (x, i, 0) is in every other chunk and never what anyone searches for;
# longer "words" are blobs (base64, hashes). Neither is a term.
MIN_TERM, MAX_TERM = 2, 64
_MEMO_MAX = 500_000  # distinct words remembered (~60 MB at most)

_WORD = re.compile(r"\w+(?:\.\w+)*")
# Every ASCII character that cannot be part of a word becomes a space: then str.split() finds
# the same words as _WORD (~2.5x faster), except that stray dots ("end.", "a..b", "...") stay
# attached; _token_terms cleans those up once per distinct token.
_ASCII_WORD_CHARS = frozenset(string.ascii_letters + string.digits + "_.")
_ASCII_SEPARATORS = {code: " " for code in range(128) if chr(code) not in _ASCII_WORD_CHARS}


def _stem(part: str) -> str:
    """Light plural folding (keys -> key); deliberately crude, applied to word parts only."""
    if not part.endswith("s") or len(part) <= 3 or not part.isalpha():
        return part
    if part.endswith("ies"):
        return part[:-3] + "y"
    if part.endswith(("sses", "xes", "ches", "shes")):
        return part[:-2]
    if part.endswith(("ss", "us", "is")):
        return part
    return part[:-1]


def _identifier_parts(ident: str) -> list[str]:
    if ident.isascii():
        if len(ident) <= MAX_TERM:  # then no part is longer
            return [p.lower() for p in identifier_parts(ident)]
        return [p.lower() for p in identifier_parts(ident) if len(p) <= MAX_TERM]
    return [p.lower() for p in ident.split("_") if p and len(p) <= MAX_TERM]


def _identifier_terms(ident: str) -> str:
    """What an identifier adds to itself: ``rotate_key`` -> rotatekey rotate key."""
    # Computed once per distinct word of a repository, in every worker: hence the special
    # cases, and _stem called only for parts ending in "s" (it changes no other).
    if ident.isalpha() and ident.islower():  # the commonest case: a plain word, one part
        if MIN_TERM <= len(ident) <= MAX_TERM and ident.endswith("s"):
            stem = _stem(ident)
            return stem if stem != ident else ""
        return ""
    parts = _identifier_parts(ident)
    if len(parts) == 1:  # one part, perhaps in another case: HTTP, Key, 2
        part = parts[0]
        terms = [] if part == ident.lower() else [part]
        if part.endswith("s") and (stem := _stem(part)) != part:
            terms.append(stem)
    elif parts:
        joined = "".join(parts)
        terms = [joined, *parts] if joined != ident.lower() else parts.copy()  # also "rotatekey"
        for part in parts:
            if part.endswith("s") and (stem := _stem(part)) not in parts:
                terms.append(stem)
    else:
        return ""
    return " ".join([term for term in terms if len(term) >= MIN_TERM])


def _word_terms(word: str) -> str:
    """``rotateKey`` -> rotatekey rotate key; ``auth.keys`` -> auth.keys auth keys key."""
    whole = word.lower()
    if "." not in word:  # the word's own memo entry is all the caching
        own = _identifier_terms(word)
        if MIN_TERM <= len(whole) <= MAX_TERM:
            return f"{whole} {own}" if own else whole
        return own
    terms = [whole] if MIN_TERM <= len(whole) <= MAX_TERM else []
    for ident in word.split("."):
        low = ident.lower()
        if MIN_TERM <= len(low) <= MAX_TERM:
            terms.append(low)
        terms.append(_identifiers[ident])
    return " ".join(filter(None, terms))


def _token_terms(token: str) -> str:
    """A token of split ASCII text: a word, or words with stray dots around them."""
    if token[0] != "." and token[-1] != "." and ".." not in token:
        return _word_terms(token)
    return " ".join(filter(None, map(_tokens.__getitem__, _WORD.findall(token))))


_identifiers = Memo(_identifier_terms, _MEMO_MAX)
_tokens = Memo(_token_terms, _MEMO_MAX)


def search_terms(text: str, path: str, symbol: str | None) -> str:
    """The full-text field of one chunk: its words, its path's words and its symbol's words."""
    # isascii() is O(1), and nearly all code is ASCII
    tokens = text.translate(_ASCII_SEPARATORS).split() if text.isascii() else _WORD.findall(text)
    tokens.extend(_WORD.findall(path))
    if symbol:
        tokens.extend(_WORD.findall(symbol))
    return " ".join(filter(None, map(_tokens.__getitem__, tokens)))


def inflections(word: str) -> list[str]:
    """Base forms a question's word may take in code, which holds few inflections:
    ``merging`` -> merge, merg; ``retried`` -> retry; ``rotation`` -> rotate; ``running`` -> run.
    Only for plain lower-case words of 5+ letters; identifiers are matched as typed."""
    if len(word) < 5 or not (word.isalpha() and word.islower()):
        return []
    forms: list[str] = []
    for suffix in ("ing", "ed", "ion"):
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            forms += [base, base + "e"]
            if len(base) > 3 and base[-1] == base[-2]:
                forms.append(base[:-1])  # running -> run, stopped -> stop
            if suffix == "ed" and base.endswith("i"):
                forms.append(base[:-1] + "y")  # retried -> retry
    if word.endswith("ies"):
        forms.append(word[:-3] + "y")
    return [form for form in forms if len(form) >= 3 and form != word]


def query_terms(query: str) -> str:
    """A query tokenised exactly like :func:`search_terms`, each term once, plus the base forms
    of its plain words (:func:`inflections`)."""
    terms = [term for word in _WORD.findall(query) for term in _tokens[word].split()]
    terms += [form for term in list(terms) for form in inflections(term)]
    return " ".join(dict.fromkeys(terms))
