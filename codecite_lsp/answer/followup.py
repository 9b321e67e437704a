"""Follow-up questions: the standalone question retrieval searches with, built from the previous
turns of a conversation ("where is it called?" after "how does Session.send work?").

With a model, one short rewrite call says what "it" is; offline, or when that call fails in any
way, a rule appends the previous question's key terms and the symbols its citations define (not
their paths: the offline answerer would then look for "py" in the code). Only retrieval and the
question the answerer is shown change: the new answer's citations are verified against this
request's retrieval, never taken from an old answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.limits import MAX_QUESTION_CHARS
from ..core.terms import IDENTIFIER, STOP_WORDS, identifier_parts

MAX_TURNS = 3  # older turns rarely matter to "it"/"that", and they would dilute the query
MAX_ADDED_WORDS = 12  # what the offline rule appends, at most
# Offline, a question with this many words of its own is taken to stand alone: the offline answerer
# looks for every question term in the code, so borrowed terms would refuse a new topic.
STANDS_ALONE_TERMS = 3
MAX_REWRITE_CHARS = 300  # a longer "question" from the rewrite call is not one: use the rule

Rewrite = Callable[[list[dict[str, str]]], str]


@dataclass(frozen=True)
class Turn:
    """One earlier exchange: the question and the answer JSON the server sent for it."""

    question: str
    answer: Mapping[str, Any]


def recent(turns: Sequence[Turn]) -> list[Turn]:
    """The last turns, their questions cut as the answerer cuts a question."""
    return [Turn(t.question[:MAX_QUESTION_CHARS], t.answer) for t in turns[-MAX_TURNS:]]


def cited(answer: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(symbols, paths) the answer's citations name, in order; a refusal's closest places give
    paths only. The answer came back from the client, so every field is checked, not trusted."""
    from ..ingest.readback import read_isolated
    from ..offline.definitions import definitions  # tree-sitter: not on the server's start-up path

    quoted: list[tuple[str, str]] = []
    paths: list[str] = []
    spans = answer.get("spans")
    for span in spans if isinstance(spans, list) else []:
        citations = span.get("citations") if isinstance(span, Mapping) else None
        for citation in citations if isinstance(citations, list) else []:
            if not isinstance(citation, Mapping):
                continue
            path = citation.get("path")
            if isinstance(path, str):
                paths.append(path)
            if isinstance(path, str) and isinstance(citation.get("quote"), str):
                quoted.append((path, citation["quote"]))
    retrieved = answer.get("retrieved")
    for ref in retrieved if isinstance(retrieved, list) else []:
        if isinstance(ref, Mapping) and isinstance(ref.get("path"), str):
            paths.append(ref["path"])
    # A definition in a quote names the symbol the citation is about. The quotes are the
    # client's text: parsed in the worker, all in one round trip.
    symbols = [d.name for found in read_isolated(definitions, quoted) for d in found]
    return _unique(symbols), _unique(paths)


def key_terms(question: str) -> list[str]:
    """The question's identifiers that say something (not 'how', 'does', 'work')."""
    return _unique(
        word
        for word in IDENTIFIER.findall(question)
        if any(
            len(part) > 1 and part.lower() not in STOP_WORDS and not part.isdigit()
            for part in identifier_parts(word)
        )
    )


def offline_standalone(question: str, turns: Sequence[Turn]) -> str:
    """The follow-up plus the last turn's key terms and the symbols its citations define; a
    question that names enough of its own ("How are tokens verified?") is left as it is."""
    if not turns or len(key_terms(question)) >= STANDS_ALONE_TERMS:
        return question
    last = turns[-1]
    symbols, _ = cited(last.answer)
    have = {word.lower() for word in IDENTIFIER.findall(question)}
    added: list[str] = []
    for word in [*key_terms(last.question), *symbols]:
        if word.lower() not in have and len(added) < MAX_ADDED_WORDS:
            have.add(word.lower())
            added.append(word)
    return " ".join([question, *added])


def rewrite_messages(question: str, turns: Sequence[Turn]) -> list[dict[str, str]]:
    lines = []
    for turn in turns:
        symbols, paths = cited(turn.answer)
        where = ", ".join([*symbols[:4], *paths[:3]]) or "nothing cited"
        lines.append(f"Q: {turn.question}\nA cited: {where}")
    return [
        {
            "role": "system",
            "content": "Rewrite the user's follow-up question about a code base as one standalone "
            "question: replace 'it', 'that', 'this' and the like with the names they refer to in "
            "the conversation. Reply with the question only, on one line.",
        },
        {
            "role": "user",
            "content": "Conversation:\n" + "\n\n".join(lines) + f"\n\nFollow-up: {question}",
        },
    ]


def standalone(question: str, turns: Sequence[Turn], rewrite: Rewrite | None) -> str:
    """The question retrieval uses. ``rewrite`` is the model call (None offline); any failure
    of it, or a reply that is not a one-line question, falls back to the offline rule."""
    turns = recent(turns)
    if not turns:
        return question
    if rewrite is not None:
        try:
            text = " ".join(rewrite(rewrite_messages(question, turns)).split())
        except Exception:  # a model failure of any kind: the rule still works
            text = ""
        if text and len(text) <= MAX_REWRITE_CHARS and not _looks_like_json(text):
            return text
    return offline_standalone(question, turns)


def _looks_like_json(text: str) -> bool:
    if not text.startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _unique(items: Any) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)
