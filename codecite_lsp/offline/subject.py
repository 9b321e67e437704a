"""The definition a question is about, for the offline answerer (pure).

An offline answer explains nothing, so the best it can do is point at the working code: the
statements (assignments, calls, returns, conditions) of the function that does what the question
asks. Among the callable definitions in the sources, the subject is the one named by the
question (``consume_value``; a definition whose body reads a name typed like code, such as
``invoke_without_command``), else the one whose body says most of the question, and says it on
many lines: ``Parameter.consume_value`` setting ``source = ParameterSource.ENVIRONMENT`` on five
lines answers "which parameter source a value came from" better than ``get_parameter_source``,
whose name says the words and whose body is one look-up. Retrieval's order breaks near-ties.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.terms import is_test_path, word_parts
from .definitions import CALLABLE_KINDS, Defined
from .source_runs import Run, terms_said
from .statements import STRINGS

_NAMED = 1.0  # the question gives the definition's name
_READS_NAME = 0.5  # its body uses a name the question types like code
_NAME_WEIGHT = 0.5  # a term its name says counts this much more than one its body says
_PER_LINE = 0.2  # each body line saying a question term, up to _LINES_COUNTED
_LINES_COUNTED = 8
_RANK_STEP = 0.05  # each place lower in retrieval's order
# A question asking what something is, which function does it, where it is defined, or for its
# documentation: the definition and its doc comment answer it, not the statements of a body.
_DESCRIBING = re.compile(
    r"^\W*(?:what|who)(?:'s|\s+(?:is|are|was|were)\b)"
    r"|\b(?:which|what)\s+(?:functions?|methods?|class(?:es)?|modules?|files?|types?)\b"
    r"|\b(?:docs?|documentation|docstrings?|documented|mean|meaning|defined|declared|signature)\b",
    re.IGNORECASE,
)
_SUBJECT = 1.8  # the factor of a window made of the subject's body statements


@dataclass(frozen=True)
class Doer:
    """The subject definition and its body's statement lines (indexes into ``run.lines``)."""

    run: Run
    definition: Defined
    body: frozenset[int]
    score: float

    def factor(self, run: Run, span: range) -> float:
        """A window gains by the share of its lines that are the subject's statements."""
        if run is not self.run:
            return 1.0
        solid = [i for i in span if run.lines[i].strip()]
        share = sum(i in self.body for i in solid) / max(1, len(solid))
        return 1.0 + (_SUBJECT - 1.0) * share


def asks_what_it_is(question: str) -> bool:
    """The question asks what something is, which function does it, where it is defined, or for
    its documentation: no subject's statements answer it."""
    return _DESCRIBING.search(question) is not None


def body_statements(run: Run, definition: Defined) -> list[int]:
    """The lines of ``definition``'s own body that do the work (not a nested definition's)."""
    if definition.signature_end < 0:  # a cut body (see _cut_body): its lines are picked there
        return [i for i in range(definition.end + 1) if _loose(run, i)]
    return [
        i
        for i in range(definition.signature_end + 1, definition.end + 1)
        if run.does(i) and run.body_of(i) is definition
    ]


def _loose(run: Run, index: int) -> bool:
    line = run.lines[index]
    return (
        bool(line.strip())
        and line[:1].isspace()
        and run.body_of(index) is None
        and not run.is_def[index]
        and not run.is_doc[index]
    )


def _cut_body(run: Run) -> Defined | None:
    """A run that starts inside a definition cut from its signature (a long function split
    into chunks) holds its body's statements up to the next definition: read as a definition
    of the chunk's symbol with no signature."""
    symbol = run.owners[0].symbol
    if not symbol or not _loose(run, 0):
        return None
    end = min((d.head for d in run.defined), default=len(run.lines)) - 1
    return Defined(re.split(r"[.#:]+", symbol)[-1], "function", 0, -1, end)


def subject(
    runs: list[Run],
    said: dict[int, list[list[str]]],
    idf: dict[str, float],
    code: frozenset[str],
) -> Doer | None:
    """The callable definition the question is about, or None when no body says any of it.
    ``said`` holds each run's question terms per line, ``code`` the words the question types
    like code (evidence.code_names)."""
    total = sum(idf.values()) or 1.0
    query = frozenset(idf)
    typed = {name.lower() for name in code}  # "source" as a word names no definition
    uses = [re.compile(rf"(?<![\w$]){re.escape(word)}(?![\w$])") for word in code]
    best: Doer | None = None
    for run in runs:
        if "test" not in query and is_test_path(run.path):
            continue  # a test restating what the code does does not do it
        cut = _cut_body(run)
        for definition in [*run.defined, *([cut] if cut is not None else [])]:
            if definition.kind not in CALLABLE_KINDS:
                continue
            body = body_statements(run, definition)
            saying = [i for i in body if said[id(run)][i]]
            if not saying:
                continue
            naming = set(terms_said(word_parts(definition.name), query))
            named = definition.name.lower() in typed
            reads = any(use.search(STRINGS.sub('""', run.lines[i])) for i in body for use in uses)
            if not (naming or named or reads):
                continue  # `__repr__` saying the class's name does not do what is asked
            covered = naming | {term for i in saying for term in said[id(run)][i]}
            score = (
                sum(idf[term] for term in covered)
                + _NAME_WEIGHT * sum(idf[term] for term in naming)
            ) / total
            score *= 1 + _PER_LINE * min(len(saying), _LINES_COUNTED)
            score += _NAMED * named + _READS_NAME * reads
            score /= 1 + _RANK_STEP * run.ranks[definition.head]
            if best is None or score > best.score:
                best = Doer(run, definition, frozenset(body), score)
    return best
