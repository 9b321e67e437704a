"""Implementation over description (pure): a chunk that is only a definition's header and its
docstring or doc comment describes the code it introduces; the chunk after it does the work.

A long definition is chunked as its header (signature, docstring) and its body. The header says
the question's words in prose and wins the keyword search, while the body that answers "how"
ranks lower. ``search`` ranks them as one unit: the body takes the unit's best score and the
description keeps ``description`` of its own, unless the query asks what something is or for
its documentation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TypeVar

from ..core.records import Chunk, Result
from .scoring import Signals
from .weights import WEIGHTS

_DOC_BLOCK = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|/\*[\s\S]*?\*/')
_COMMENT = re.compile(r"^\s*(?:#|//|\*|--|;)")
_DECORATOR = re.compile(r"^\s*@")
# At most this many lines of code besides the prose (signature lines, a `pass`, a brace).
_HEADER_LINES = 3
# ... and at least this many lines of prose: a one-line docstring describes little.
_PROSE_LINES = 3
_ASKS_WHAT = re.compile(
    r"^\s*what\s+(?:is|are|does)\b|\b(?:docs?|documentation|docstrings?|described)\b",
    re.IGNORECASE,
)


def is_description(text: str) -> bool:
    """Whether ``text`` is a header with its prose only: doc blocks and comments, decorators,
    and at most a few lines of signature."""
    prose = sum(block.count("\n") + 1 for block in _DOC_BLOCK.findall(text))
    rest = _DOC_BLOCK.sub("", text).splitlines()
    prose += sum(1 for line in rest if _COMMENT.match(line))
    code = [
        line
        for line in rest
        if line.strip() and not _COMMENT.match(line) and not _DECORATOR.match(line)
    ]
    return prose >= _PROSE_LINES and len(code) <= _HEADER_LINES


def asks_what(query: str) -> bool:
    """The query asks what something is, or for its documentation: the prose is the answer."""
    return _ASKS_WHAT.search(query) is not None


_K = TypeVar("_K")


def body_of(description: Chunk, spans: Mapping[_K, Chunk]) -> _K | None:
    """The key of the span right after ``description`` in its file that continues the same
    definition (its symbol, or one inside it), among ``spans``."""
    symbol = description.symbol
    if not symbol:
        return None
    for key, span in spans.items():
        if (
            span.path == description.path
            and span.start_line == description.end_line + 1
            and span.symbol
            and (span.symbol == symbol or span.symbol.startswith(symbol + "."))
        ):
            return key
    return None


def bodies_first(scores: dict[str, float], chunks: dict[str, Chunk]) -> dict[str, float]:
    """A definition's header-and-docstring chunk and the body after it ranked as one unit
    (:mod:`.description`): the body takes the better score, the description ``description``
    of its own. Among the best candidates, whose neighbours are in ``chunks``."""
    ranked = dict(scores)
    top = sorted(scores, key=lambda key: (-scores[key], key))[: WEIGHTS.neighbour_lenders]
    for key in top:
        if not is_description(chunks[key].text):
            continue
        body = body_of(chunks[key], chunks)
        if body is not None and body in ranked:
            ranked[body] = max(ranked[body], scores[key])
            ranked[key] = scores[key] * WEIGHTS.description
    return ranked


def bodies_first_reranked(
    scored: list[tuple[Result, Signals]],
) -> list[tuple[Result, Signals]]:
    """The question's rerank with the same unit (:func:`bodies_first`): the rerank reads the
    question's words, which a docstring says in prose, so the description would win again over
    the body search put first. Among the best ``neighbour_lenders``, a description whose body is
    a candidate gives it its rerank score and relevance when better, and keeps ``description``
    of its own (term ``description`` on both)."""
    ranked = list(scored)
    spans = {i: result.chunk for i, (result, _) in enumerate(scored)}
    top = sorted(range(len(scored)), key=lambda i: -scored[i][1].rerank)
    for i in top[: WEIGHTS.neighbour_lenders]:
        result, own = scored[i]
        if not is_description(result.chunk.text):
            continue
        body = body_of(result.chunk, spans)
        if body is None:
            continue
        text, signals = ranked[body]
        if own.rerank > signals.rerank:
            gained = signals.plus("description", own.rerank - signals.rerank)
            ranked[body] = (text, replace(gained, relevance=max(gained.relevance, own.relevance)))
        ranked[i] = (result, own.plus("description", -own.rerank * (1.0 - WEIGHTS.description)))
    return ranked
