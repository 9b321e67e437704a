"""Whether retrieval's evidence lets the offline answerer quote anything (pure).

With a model, a weak match costs a refusal by the model; offline, the best-matching lines would
be quoted as the answer whatever they say. So the offline answerer answers only when retrieval
found real evidence: a source defining (or, for a name typed like code, using) a name the
question gives, or a best source whose calibrated relevance (``retrieve.scoring.relevance``: the
idf-weighted share of the question's content words it holds) reaches ``OFFLINE_FLOOR``, above
the floor every question must clear. Measured on the requests question set
(bench/eval_offline.py): the answerable questions' best sources score 0.61 and more, the
unanswerable that clear the relevance floor ("refresh OAuth tokens", "open WebSocket
connections") 0.59 and 0.27, with no name of theirs defined.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.records import Result
from ..core.terms import IDENTIFIER, whole_word, word_parts

OFFLINE_FLOOR = 0.6
# A word typed like code: snake_case, or a capital after a small letter (camelCase,
# HTTPAdapter); not "OAuth" or "SQLite", which are how those words are written in prose.
_CODE_LIKE = re.compile(r"_|[a-z0-9][A-Z]")


@dataclass(frozen=True)
class Evidence:
    """What retrieval says about the question, for the offline answerer."""

    relevance: float  # the best selected source's calibrated relevance (Result.score)
    named: bool  # a source defines a name the question gives, or uses a code-like one

    @property
    def answers(self) -> bool:
        return self.named or self.relevance >= OFFLINE_FLOOR


def code_names(question: str) -> frozenset[str]:
    """The question's words typed like code (``invoke_without_command``, ``HTTPAdapter``,
    the parts of ``Session.send``, a word in backticks or called: ``range()``), as typed."""
    dotted = {part for word in re.findall(r"[\w.]+", question) for part in word.split(".")}
    dotted |= set(IDENTIFIER.findall(question))
    quoted = {
        word for text in re.findall(r"`([^`]+)`", question) for word in IDENTIFIER.findall(text)
    }
    quoted |= set(re.findall(r"(\w+)\(\)", question))  # "range()": a call, written as code
    return frozenset(
        word for word in dotted if len(word) >= 3 and (_CODE_LIKE.search(word) or word in quoted)
    )


def _names_definition(question: str, name: str) -> bool:
    """``name`` (a definition) is named by the question: typed as it is (``consume_value``,
    or ``close`` as a plain word), or each of its two or more word parts said by the question
    (``should_bypass_proxies`` for "should ... bypass the proxies")."""
    typed = {word.lower() for word in IDENTIFIER.findall(question)}
    if name.lower() in typed and (len(name) >= 4 or _CODE_LIKE.search(name)):
        return True
    parts = set(word_parts(name))
    return len(parts) >= 2 and parts <= set(word_parts(question))


def gather(question: str, selected: Sequence[Result]) -> Evidence:
    """The evidence retrieval's selected sources give for ``question``."""
    relevance = max((result.score for result in selected), default=0.0)
    code = code_names(question)
    named = any(
        _names_definition(question, name) for result in selected for name in result.chunk.defines
    ) or any(whole_word(word, result.chunk.text) for word in code for result in selected)
    return Evidence(relevance, named)
