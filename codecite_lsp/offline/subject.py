"""The definition a question is about, for the offline answerer (pure).

An offline answer explains nothing, so the best it can do is point at the working code: the
statements (assignments, calls, returns, conditions) of the function that does what the question
asks. Among the callable definitions in the sources, the subject is the one named by the
question (``consume_value``; a definition whose body reads a name typed like code, such as
``invoke_without_command``), else the one whose body says most of the question, and says it on
many lines: ``Parameter.consume_value`` setting ``source = ParameterSource.ENVIRONMENT`` on five
lines answers "which parameter source a value came from" better than ``get_parameter_source``,
whose name says the words and whose body is one look-up. A method's class speaks for it
(``ChoiceLoader.get_source`` for "the choice loader"), and so does its docstring or doc comment
("Whether this is the last iteration"): it says what the definition does, though the answer
quotes the statements that do it. A candidate another candidate calls is handed part of the
work (a ``send`` method calling the ``_frame`` that builds the bytes). A chunk cut from a long
function's middle is read as that function's body, and retrieval's order weighs: the definition
it ranked higher is the likelier subject when bodies say the question about as well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..core.terms import NOT_AFTER_WORD, is_test_path, word_parts, word_pattern
from .definitions import CALLABLE_KINDS, Defined
from .source_runs import Run, terms_said
from .statements import STRINGS, without_messages

_NAMED = 2.0  # the question gives the definition's name: it wins
_READS_NAME = 1.5  # its body uses a name the question types like code (a name beats it)
_WORDED = 0.25  # the question says its name as a plain word
_NAME_WEIGHT = 0.5  # a term its name says counts this much more than one its body says
_PER_LINE = 0.2  # each body line saying a question term, up to _LINES_COUNTED
_LINES_COUNTED = 8
_SILENT_BODY = 6  # statement lines of a body saying none of the question, quoted whole...
# ... unless it only declares: an abstract method's or a placeholder's body does no work.
_STUB = re.compile(
    r"\s*(?:pass|\.\.\.|raise\s+NotImplementedError\b.*|throw\s+new\s+\w*(?:NotImplemented|"
    r"UnsupportedOperation)\w*\b.*|(?:todo|unimplemented)!\(.*\);?)\s*$"
)
# Each place lower in retrieval's order: the definition retrieval ranked best is the likelier
# subject when bodies say the question about as well.
_RANK_STEP = 0.3
# The share of a caller's score a candidate it calls gains: a little less than a third, so a
# helper the subject calls (`new_key` in `rotate_key`) follows it rather than overtakes it.
_DELEGATE = 0.3
_UNNAMED = 0.5  # a definition whose name (and its class's) says none of the question
# Methods that present an object rather than do anything.
_PRESENTING = frozenset({"__repr__", "__str__", "__format__", "__rich_repr__", "toString"})
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
    body: frozenset[int]  # those that say a question term (all of a short silent body)
    score: float
    # The question types its name, or a likelier subject calls it: its statements need not say
    # more of the question than they do.
    vouched: bool = False
    # The question terms it says itself: its own name, docstring, statements (not its class's
    # name, which every method of the class shares).
    said: frozenset[str] = frozenset()

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


def doc_lines(run: Run, definition: Defined) -> list[int]:
    """The comment and docstring lines that explain ``definition``: inside its own body (a
    Python docstring, a comment in the body) and the doc comment right above its head (Java,
    Go, Rust, JavaScript)."""
    if definition.signature_end < 0:  # a cut body: its loose comment lines
        inside = [i for i in range(definition.end + 1) if run.is_doc[i] and run.body_of(i) is None]
    else:
        inside = [
            i
            for i in range(definition.signature_end + 1, definition.end + 1)
            if run.is_doc[i] and run.body_of(i) is definition
        ]
    above = definition.head - 1
    while above >= 0 and run.is_doc[above]:
        inside.append(above)
        above -= 1
    return inside


def _ends_inside(run: Run, definition: Defined) -> bool:
    """More lines of code follow ``definition`` in the run: its body was not cut short."""
    return any(line.strip() for line in run.lines[definition.end + 1 :])


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
    symbol = run.symbol_at(0)
    if not symbol or not _loose(run, 0):
        return None
    end = min((d.head for d in run.defined), default=len(run.lines)) - 1
    return Defined(re.split(r"[.#:]+", symbol)[-1], "function", 0, -1, end)


def subjects(
    runs: list[Run],
    said: dict[int, list[list[str]]],
    idf: dict[str, float],
    code: frozenset[str],
    names: frozenset[str],
) -> list[Doer]:
    """The callable definitions whose bodies say some of the question, the likeliest subject
    first. ``said`` holds each run's question terms per line, ``code`` the words the question
    types like code (evidence.code_names), ``names`` every word it types."""
    total = sum(idf.values()) or 1.0
    query = frozenset(idf)
    typed = {name.lower() for name in code}
    # "source" as a plain word hardly names a definition: a little weight, not a name's.
    words = {word.lower() for word in names if len(word) >= 4}
    uses = [(word, word_pattern(word)) for word in code]
    found: list[Doer] = []
    for run in runs:
        if "test" not in query and is_test_path(run.path):
            continue  # a test restating what the code does does not do it
        cut = _cut_body(run)
        for definition in [*run.defined, *([cut] if cut is not None else [])]:
            if definition.kind not in CALLABLE_KINDS or definition.name in _PRESENTING:
                continue  # `__repr__` saying the class's name does not do what is asked
            body = body_statements(run, definition)
            saying = [i for i in body if said[id(run)][i]]
            explained = {term for i in doc_lines(run, definition) for term in said[id(run)][i]}
            # `CaseInsensitiveDict` names its methods too; a method using its own class's
            # name (`__eq__` building one) does not read a name the question asks about.
            own_names = {part.lower() for part in run.qualified(definition).split(".")}
            named = bool(own_names & typed)
            reads = any(
                use.search(STRINGS.sub('""', run.lines[i]))
                for i in body
                for word, use in uses
                if word.lower() not in own_names
            )
            # `ChoiceLoader.get_source`: its class's name says what the method is about, its
            # own name more so.
            naming = set(terms_said(word_parts(run.qualified(definition)), query))
            # Statements saying none of the question still do it when the name and docstring say
            # two of its terms (`LoopContext.last`: "Whether this is the last iteration of the
            # loop", `return self._peek_next() is missing`): a short body, seen to end (lines
            # follow it; a body cut at the end of the retrieved lines may go on), is the answer.
            own = set(terms_said(word_parts(definition.name), query))
            silent = (
                len(naming | explained) >= 2
                and bool(own | explained)  # not only its class's name (`HTTPAdapter.__getstate__`)
                and len(body) <= _SILENT_BODY
                and not all(_STUB.match(run.lines[i]) for i in body)
            )
            if not saying and not (silent and _ends_inside(run, definition)):
                continue
            worded = definition.name.lower() in words  # "where does rotate ...": weaker
            # Its docstring says what it does (`Whether this is the last iteration`): evidence
            # for choosing it, though the answer quotes its statements, not the docstring.
            # A line saying the question only in a message or a URL names the thing; the
            # statements doing it say it in code (`rotate_key` retiring the old key beats a
            # client posting to `/rotate` and raising "rotation failed"; jinja's
            # `is_safe_attribute` beats `unsafe_undefined` building the "access to attribute
            # ... is unsafe" message).
            in_code = {i: _said_in_code(run.lines[i], query) for i in saying}
            stated = {term for terms in in_code.values() for term in terms}
            covered = naming | explained | stated
            score = sum(idf[term] for term in covered) + _NAME_WEIGHT * sum(
                idf[term] for term in own
            )
            lines_in_code = sum(bool(terms) for terms in in_code.values())
            score *= (1 + _PER_LINE * min(lines_in_code, _LINES_COUNTED)) / total
            score *= 1.0 if naming or named or reads else _UNNAMED
            score += _NAMED * named + _READS_NAME * reads + _WORDED * (worded and not named)
            score /= 1 + _RANK_STEP * run.ranks[definition.head]
            found.append(
                Doer(
                    run,
                    definition,
                    frozenset(saying or body),
                    score,
                    named,
                    frozenset(own | explained | stated),
                )
            )
    return sorted(_delegated(found), key=lambda doer: -doer.score)


def _said_in_code(line: str, query: frozenset[str]) -> set[str]:
    """The question terms ``line`` says outside its messages and URLs."""
    return set(terms_said(word_parts(without_messages(line)), query))


def _delegated(found: list[Doer]) -> list[Doer]:
    """A subject calling another candidate hands it part of the work: the callee gains a share
    of the caller's score (`send` calling `_frame`, which builds the bytes sent)."""
    gained: list[float | None] = [None] * len(found)
    for caller in found:
        run = caller.run
        text = "\n".join(
            STRINGS.sub('""', run.lines[i]) for i in body_statements(run, caller.definition)
        )
        for at, callee in enumerate(found):
            name = callee.definition.name
            inner = callee.run is run and caller.definition.encloses(callee.definition.head)
            if callee is caller or len(name) < 4 or inner:
                continue  # its own nested helper (a `result` building the reply) does no work
            if re.search(rf"{NOT_AFTER_WORD}{re.escape(name)}\s*\(", text):
                gained[at] = max(gained[at] or 0.0, _DELEGATE * caller.score)
    return [
        doer if gain is None else replace(doer, score=doer.score + gain, vouched=True)
        for doer, gain in zip(found, gained, strict=True)
    ]
