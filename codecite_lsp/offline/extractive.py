"""The offline answerer (pure): quotes the most relevant lines, in the model's JSON reply shape.

No model is involved, so nothing is paraphrased: each claim is a short sentence built from the
symbol and its doc comment, cited with a verbatim window of 1-4 lines. The reply goes through the
same citation gate as a model's.

Relevance: question terms (identifiers split on case and underscores, stop words removed, crude
suffix stemming; a compound such as ``timeout`` says ``time``) weighted by idf, where each
non-blank line of the sources is a document. A window scores the idf of the distinct question
terms it covers, its own and its enclosing definition's name's, boosted when it holds a
definition, an explaining comment, or sits in a definition the question names, and lightly
penalised for length. A question of several terms needs a window covering two of them: one
shared word is not evidence when the sources hold several of the question's terms (they could
have met in one place, and did not). A "how does X do Y" question is answered by the statements
that do it: a window of lines in a function's body gains by the share of the question the
function's name says, and a docstring, signature or field declaration loses; so does every
question that does not ask what something is or for its documentation. The statements of the
question's subject (subject.py: the definition it names, else the one whose body says most of
it) gain most, and the statements of the likeliest subjects (up to three, each scoring at least
half the first's) lead the answer, one claim each: an offline answer cannot explain, so
it points at the working code. A claim's text says only what its quote shows (its own comment
lines, never a docstring left out of the quote: the gate would remove that sentence). What
defines what comes from the chunker's tree-sitter queries (definitions.py), in every language it
reads.

Sources are read as runs of lines (source_runs.py); a window spanning two chunks of one file is
cited with one citation per chunk it touches. Windows are widened to whole statements
(statements.py). Given retrieval's evidence (evidence.py), a question it found no real match for
is refused rather than answered with the nearest lines.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from typing import Any

from ..core.records import Source
from ..core.terms import IDENTIFIER, is_test_path, whole_word, word_parts
from .evidence import Evidence, code_names
from .source_runs import (
    HEADING,
    PROSE_SUFFIXES,
    Run,
    read_runs,
    terms_said,
)
from .statements import (
    MAX_WIDEN,
    whole_code,
    whole_sentences,
)
from .subject import Doer, asks_what_it_is, subjects

MAX_WINDOW = 4  # lines a quoted window holds at most (before widening to whole statements)
_MAX_CLAIMS = 4
_PER_RUN = 2
_COVERAGE_FLOOR = 0.34  # a quoted window covers at least a third of the question's weight
_TEST_DISCOUNT = 0.7  # a window in a test file, for a question that is not about tests
# "How" questions: a window of body statements gains by the share of the question its function's
# name says (none for `__repr__`); a window with none (docstring, signature, fields,
# module-level lines) loses; a mixed window is in between.
_DOING_NAMED, _DESCRIBING_ONLY = 1.5, 0.8
_SUBJECTS = 3  # the likeliest subjects, each of whose statements leads a claim...
_RUNNER_UP = 0.5  # ... when it scores at least half the likeliest one's score


@dataclass(frozen=True)
class _Window:
    score: float
    coverage: float
    run: Run
    first: int
    last: int

    @property
    def rank(self) -> int:
        return self.run.ranks[self.first]


def _idf(documents: list[set[str]], wanted: frozenset[str]) -> dict[str, float]:
    count = len(documents)
    return {
        term: math.log(1 + count / max(1, sum(term in doc for doc in documents))) for term in wanted
    }


@dataclass(frozen=True)
class _Question:
    terms: frozenset[str]
    names: frozenset[str]  # every identifier typed, verbatim: a definition it names is the subject
    idf: dict[str, float]
    total: float
    needed: int  # distinct terms a window must cover: 2 once the sources hold two of them
    asks_how: bool  # "how does X do Y": the statements doing it answer, not what describes X
    doers: tuple[Doer, ...] = ()  # the definitions the question is about, likeliest first


def _windows(run: Run, said: list[list[str]], question: _Question) -> list[_Window]:
    found = []
    idf = question.idf
    # A "how" answer may run on through the statements doing it, saying the question or not.
    useful = [
        bool(said[i]) or run.is_def[i] or run.is_doc[i] or (question.asks_how and run.does(i))
        for i in range(len(run.lines))
    ]
    # Like the reranker: quote the code, not a test restating it, unless tests are asked about.
    discount = _TEST_DISCOUNT if "test" not in question.terms and is_test_path(run.path) else 1.0
    file_terms = set(terms_said(word_parts(run.path.rsplit("/", 1)[-1]), question.terms))
    # A subject's statements need not say two of the question's terms when the question names it,
    # a likelier subject calls it, or the definition as a whole (name, docstring, statements)
    # says two: the terms meet in one place, the definition (`after_this_request`'s body says
    # only "request"; `do_truncate`'s only "truncate", its docstring "long strings").
    free = {
        i
        for doer in question.doers
        if doer.run is run and (doer.vouched or len(doer.said) >= question.needed)
        for i in doer.body
    }
    doer = question.doers[0] if question.doers else None
    for first in range(len(run.lines)):
        if not said[first] and first not in free:
            continue  # a window starts on a line saying a question term, never on padding
        # Lines inside `LoopContext.cycle` are about the loop's cycle: its name's terms count.
        around = run.subject(first, first, question.terms)
        name = around.name or around.enclosing or ""
        context = set(terms_said(word_parts(around.qualified or name), question.terms))
        naming = sum(idf[term] for term in context) / question.total
        named = name.rsplit(".", 1)[-1] in question.names
        covered: set[str] = set()
        repeats = 0.0
        for last in range(first, min(first + MAX_WINDOW, len(run.lines))):
            if not run.lines[last].strip() or not useful[last]:
                break
            hits = said[last]
            repeats += sum(idf[term] for term in hits if term in covered)
            covered |= set(hits)
            evidence = covered | context
            if first not in free and (not covered or len(evidence) < question.needed):
                continue  # a claim quotes question terms, and more than one shared word
            # The file's name adds weight (lines of gate.py are about the gate), never evidence:
            # every line of adapters.py would otherwise say "adapter".
            weight = sum(idf[term] for term in evidence | file_terms)
            span = range(first, last + 1)
            boost = 1.0
            # A definition of the subject, not one that merely precedes a matching line.
            # (Not for "how" questions: a signature says what, not how.)
            defines = not question.asks_how and any(run.is_def[i] and said[i] for i in span)
            boost += 0.3 if defines else 0.0
            boost += 0.2 if any(run.is_doc[i] for i in span) else 0.0
            boost += 0.3 if named else 0.0
            if question.asks_how and discount == 1.0:  # a test restating it does not do it
                boost *= _how_factor(run, span, naming)
                boost *= doer.factor(run, span) if doer else 1.0
            # Repeated terms add a little: the code that is *about* the subject says it often.
            score = (weight + 0.1 * repeats) * boost * discount / (1 + 0.15 * (last - first))
            found.append(_Window(score, weight / question.total, run, first, last))
    return found


def _how_factor(run: Run, span: range, naming: float) -> float:
    """For a "how" question, the statements in a function's body that do the thing beat its
    docstring, its signature and a class's field declarations, and more so in a function whose
    name says the question's words (`_check` for "how is a quote checked"; ``naming`` is the
    share of the question's weight the name says)."""
    solid = [i for i in span if run.lines[i].strip()]
    share = sum(run.does(i) for i in solid) / max(1, len(solid))
    doing = 1.0 + _DOING_NAMED * naming
    return _DESCRIBING_ONLY + (doing - _DESCRIBING_ONLY) * share


IMPORT = re.compile(r"\s*(?:from\s+\S+\s+import\b|import\b|#include\b|use\s|require\b)")
SENTENCE_END = re.compile(r"[.!?:;]\s*(?:\"{3}|'{3}|\*/|-->)?\s*$")


def _to_sentence_end(window: _Window) -> _Window:
    """A quote stopping mid-sentence in a comment or docstring goes on to the sentence's end
    (within the window limit): 'When a timeout occurs,' needs its next line."""
    run, last = window.run, window.last
    while (
        run.is_doc[last]
        and last + 1 < len(run.lines)
        and run.is_doc[last + 1]
        and last + 1 - window.first < MAX_WINDOW
        and not SENTENCE_END.search(run.lines[last])
    ):
        last += 1
    return replace(window, last=last)


def _whole(window: _Window) -> _Window | None:
    """The window widened to whole statements and sentences; None for a fragment or a bare
    heading."""
    run = window.run
    code = ["" if doc else line for line, doc in zip(run.lines, run.is_doc, strict=True)]
    span = whole_code(code, window.first, window.last)
    if span is not None and (run.is_doc[span[0]] or run.is_doc[span[1]]):
        span = whole_sentences(run.lines, run.is_doc, *span)
    if span is None or span[1] - span[0] >= MAX_WINDOW + MAX_WIDEN:
        return None
    if IMPORT.match(run.lines[span[0]]):
        return None  # an import names a thing; the quote worth showing is where it is used
    first, last = span
    if run.path.lower().endswith(PROSE_SUFFIXES) and all(
        not line.strip() or HEADING.match(line) for line in run.lines[first : last + 1]
    ):
        return None
    return replace(window, first=first, last=last)


def _named_definition_first(
    picked: list[_Window], every: list[_Window], query: frozenset[str]
) -> list[_Window]:
    """For "what is it / where is it defined": the window holding the head of a definition
    whose whole name the question says (`TokenBucket` for "the token bucket") leads, also when
    lines saying more of the question's other words outscored it."""

    def named(window: _Window) -> bool:
        return any(
            # the definition's header (decorators to the end of its signature) is in the window
            d.head <= window.last
            and window.first <= d.signature_end
            and (parts := word_parts(d.name.rsplit(".", 1)[-1]))
            and len(set(terms_said(parts, query))) >= len(parts)
            for d in window.run.defined
        )

    heads = [w for w in picked if named(w)] or sorted(
        (w for w in every if named(w)), key=lambda w: (-w.score, w.rank, w.first)
    )[:1]
    if not heads:
        return picked
    lead = heads[0]
    return [lead, *(w for w in picked if w is not lead and not _overlaps(w, lead))]


def _overlaps(one: _Window, other: _Window) -> bool:
    return one.run is other.run and one.first <= other.last and other.first <= one.last


def _definitions_first(windows: list[_Window]) -> list[_Window]:
    """A window defining a name another window uses is quoted before it; otherwise the order
    stays (best first)."""

    def defined(window: _Window) -> set[str]:
        run = window.run
        return {d.name for d in run.defined if window.first <= d.head <= window.last}

    def text(window: _Window) -> str:
        return "\n".join(window.run.lines[window.first : window.last + 1])

    def used_elsewhere(window: _Window) -> bool:
        names = defined(window)
        return any(
            whole_word(name, text(other))
            for other in windows
            if other is not window
            for name in names
        )

    return sorted(windows, key=lambda window: not used_elsewhere(window))


def _pick(windows: list[_Window], leads: list[list[_Window]]) -> list[_Window]:
    """The best non-overlapping windows: at most 2 per run, 4 in all, none far below the best;
    first, for each subject in ``leads`` (its statements' windows, best first), the best one
    that is a whole statement, whatever its score."""
    # Ties go to the source retrieval ranked higher (sources come best first), then earlier lines.
    ordered = sorted(windows, key=lambda w: (-w.score, w.rank, w.first))
    top = ordered[0].score if ordered else 0.0
    picked: list[_Window] = []
    for each in leads:
        for lead in each:
            whole = _whole(_to_sentence_end(lead))
            if whole is not None and not any(_overlaps(whole, p) for p in picked):
                picked.append(whole)
                break
    for best in ordered:
        if len(picked) == _MAX_CLAIMS or best.score < 0.35 * top:
            break
        window = _whole(_to_sentence_end(best))
        if window is None:
            continue  # a fragment that cannot be widened to a whole statement says nothing
        same = [p for p in picked if p.run is window.run]
        if len(same) >= _PER_RUN:
            continue
        if any(window.first <= p.last and p.first <= window.last for p in same):
            continue
        # One line apart: one quote reads better than two ("needle = ...", "return ...").
        near = next(
            (p for p in same if max(p.first, window.first) - min(p.last, window.last) <= 2), None
        )
        if near is not None:
            first, last = min(near.first, window.first), max(near.last, window.last)
            joined = replace(near, first=first, last=last)
            if joined.last - joined.first < MAX_WINDOW:
                picked[picked.index(near)] = joined
                continue
        picked.append(window)
    return picked


def _claim_text(window: _Window, query: frozenset[str]) -> str:
    run = window.run
    subject = run.subject(window.first, window.last, query)
    name, doc = subject.name, subject.doc
    if name and subject.defined_here:
        parent = (subject.qualified or "").removesuffix(name).removesuffix(".")
        where = f"{run.path} ({parent})" if parent else run.path
        return f"`{name}` in {where}: {doc}" if doc else f"`{name}` is defined in {where}:"
    first, last = run.number(window.first), run.number(window.last)
    lines = f"line {first}" if first == last else f"lines {first}-{last}"
    enclosing = subject.qualified  # a name defined just above encloses the window
    where = f"In `{enclosing}` ({run.path})" if enclosing else run.path
    return f"{where}, {lines}: {doc}" if doc else f"{where}, {lines}:"


def claim(text: str, run: Run, first: int, last: int) -> dict[str, Any]:
    """A claim span of the reply, citing ``run``'s lines ``first``-``last``."""
    return {"kind": "claim", "text": text, "citations": run.citations(first, last)}


def reply(intro: str, claims: list[dict[str, Any]]) -> str:
    """The reply in the model's JSON shape: ``intro`` then ``claims``; none: a refusal."""
    if not claims:
        return json.dumps({"spans": [], "refuse": {"reason": "no_span_in_retrieval"}})
    return json.dumps({"spans": [{"kind": "prose", "text": intro}, *claims], "refuse": None})


def answer(question: str, sources: list[Source], evidence: Evidence | None = None) -> str:
    """Reply (model JSON shape) quoting the lines that best match the question, or a refusal:
    also when retrieval's ``evidence`` says the sources do not answer it."""
    query = frozenset(word_parts(question))
    if not query or (evidence is not None and not evidence.answers):
        return reply("", [])
    runs = read_runs(sources)
    if not runs:
        return reply("", [])
    said = {id(run): [terms_said(words, query) for words in run.line_terms] for run in runs}
    documents = [
        set(terms)
        for run in runs
        for words, terms in zip(run.terms, said[id(run)], strict=True)
        if words
    ]
    idf = _idf(documents, query)
    # A question term found nowhere still counts in the total, so an off-topic question whose only
    # overlap is one common word does not clear the coverage floor.
    names = frozenset(IDENTIFIER.findall(question))
    present = {term for document in documents for term in document}
    # Any question but "what is it / where is it defined / its docs" is answered by what the
    # code does: an offline answer points at the working code.
    asks_how = not asks_what_it_is(question)
    # The likeliest subjects, best first: each leads with one of its statements.
    doers = subjects(runs, said, idf, code_names(question), names)[:_SUBJECTS] if asks_how else []
    asked = _Question(
        query, names, idf, sum(idf.values()), min(2, len(present)), asks_how, tuple(doers)
    )
    every = [
        window
        for run in runs
        for window in _windows(run, said[id(run)], asked)
        if not _echoes(window, question)
    ]
    # The subject's statements lead even below the coverage floor: a body says the question's
    # things ("source = ParameterSource.ENVIRONMENT"), not its words ("decide", "came from").
    leads = [
        sorted(
            (w for w in every if w.run is each.run and w.first in each.body),
            key=lambda w: (-w.score, w.first),
        )
        for each in doers
        if each.score >= _RUNNER_UP * doers[0].score
    ]
    picked = _pick([w for w in every if w.coverage >= _COVERAGE_FLOOR], leads)
    # The subject's statements stay first: they are what the question asks about.
    led = bool(picked) and any(
        picked[0].run is each.run and picked[0].first in each.body for each in doers
    )
    picked = picked[:1] + _definitions_first(picked[1:]) if led else _definitions_first(picked)
    if not asks_how:
        picked = _named_definition_first(picked, every, query)
    claims = [claim(_claim_text(w, query), w.run, w.first, w.last) for w in picked]
    return reply("These lines of the indexed code best match the question:", claims)


def _echoes(window: _Window, question: str) -> bool:
    """Lines that repeat the question itself (a README example, a test's list of questions)
    match it best and answer nothing."""
    asked = " ".join(question.lower().split()).rstrip("?!. ")
    if len(asked.split()) < 3:
        return False
    quoted = " ".join(" ".join(window.run.lines[window.first : window.last + 1]).lower().split())
    return asked in quoted
