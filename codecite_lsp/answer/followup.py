"""Follow-up questions: the standalone question retrieval searches with, built from the previous
turns of a conversation ("where is it called?" after "how does Session.send work?").

A question continues the conversation only when it refers back to it (a pronoun, "and ...",
no subject of its own) or shares a term with it (:func:`continues`); any other question starts a
new one. "Where is that called?" looks for the callers of the symbols the last answer cited
(:func:`callers_asked`), not for the same chunks again.

With a model, one short rewrite call says what "it" is; offline, or when that call fails in any
way, a rule appends the previous question's key terms and the symbols its citations define (not
their paths: the offline answerer would then look for "py" in the code). Only retrieval and the
question the answerer is shown change: the new answer's citations are verified against this
request's retrieval, never taken from an old answer.
"""

from __future__ import annotations

import json
import re
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

# Words by which a question points back at the conversation ("where is *it* called?").
_POINTING = frozenset(
    {
        "it", "its", "it's", "that", "this", "these", "those", "they", "them", "their", "there",
        "same", "above", "previous", "former", "latter", "one", "ones",
    }
)  # fmt: skip
_GOING_ON = ("and ", "also ", "what about ", "how about ", "then ", "so ", "but ", "why ")
_CALLS = frozenset(
    {
        "call", "calls", "called", "calling", "caller", "callers", "invoke", "invokes", "invoked",
        "invoking", "use", "uses", "used", "using", "usage", "usages", "reference", "references",
        "referenced", "referencing",
    }
)  # fmt: skip
_CODE_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")  # rotateKey, not Where
_WORD = re.compile(r"[\w']+")  # whole identifiers: `invoke_without_command` is not "invoke"


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


def continues(question: str, turns: Sequence[Turn]) -> bool:
    """Whether ``question`` follows up on ``turns``: it points back at them ("where is it
    called?", "and the tests?"), names nothing of its own ("why?"), or shares a term with
    their questions or the symbols and files their answers cited. "What does
    invoke_without_command do?" after a question about ``consume_value`` does none of these."""
    if not turns:
        return False
    said = question.strip().lower()
    if said.startswith(_GOING_ON) or not _POINTING.isdisjoint(_WORD.findall(said)):
        return True
    own = _parts(key_terms(question))
    if not own:
        return True
    before: list[str] = []
    for turn in turns:
        symbols, paths = cited(turn.answer)
        stems = [path.rsplit("/", 1)[-1].split(".")[0] for path in paths]
        before += [*key_terms(turn.question), *symbols, *stems]
    return not own.isdisjoint(_parts(before))


def callers_asked(question: str, turns: Sequence[Turn]) -> list[str]:
    """When ``question`` asks where something is called or used ("where is that called?", "who
    calls it?"): the names the last question gave as code (``Session.send``, ``rotate_key``),
    then the symbols its answer's citations define, else its key terms. [] for any other
    question."""
    if not turns or _CALLS.isdisjoint(_WORD.findall(question.lower())):
        return []
    last = turns[-1]
    symbols, _ = cited(last.answer)
    as_code = [
        name.rsplit(".", 1)[-1]
        for name in _CODE_NAME.findall(last.question)
        if "." in name or "_" in name.strip("_") or _INNER_CAPITAL.search(name)
    ]
    return _unique([*as_code, *symbols]) or key_terms(last.question)


def callers_question(names: Sequence[str]) -> str:
    """The standalone form of "where is that called?" about ``names``."""
    return f"Where is {' or '.join(f'`{name}`' for name in names[:3])} used?"


def _parts(words: Sequence[str]) -> set[str]:
    """The identifier parts that say something, lower-cased ("rotate_key" -> rotate, key)."""
    return {
        part.lower()
        for word in words
        for part in identifier_parts(word)
        if len(part) > 1 and part.lower() not in STOP_WORDS and not part.isdigit()
    }


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
    have = {word.lower() for word in IDENTIFIER.findall(question)}
    added: list[str] = []
    # Newest turn first; a turn that was itself a follow-up naming nothing ("where is that class
    # defined?") has its subject in the turn before it, so that one is read too.
    for turn in reversed(turns):
        symbols, _ = cited(turn.answer)
        for word in [*key_terms(turn.question), *symbols]:
            if word.lower() not in have and len(added) < MAX_ADDED_WORDS:
                have.add(word.lower())
                added.append(word)
        if _names_its_subject(turn.question):
            break
    return " ".join([question, *added])


def _names_its_subject(question: str) -> bool:
    """Whether a question says what it is about: enough words of its own, or a name written as
    code (`revoke_token`, `Session.send`, `TokenBucket`)."""
    return len(key_terms(question)) >= STANDS_ALONE_TERMS or any(
        "." in name or "_" in name.strip("_") or _INNER_CAPITAL.search(name)
        for name in _CODE_NAME.findall(question)
    )


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
