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
have met in one place, and did not).

Sources that are adjacent pieces of one file are read as one run of lines, so a signature and
its docstring split across two chunks still make one window; such a window is cited with one
citation per chunk it touches.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any

from ..core.terms import IDENTIFIER, is_test_path, says, word_parts
from .citations import declared_lines
from .prompt import Source
from .statements import MAX_WIDEN, cannot_answer, missing_words, whole_code, whole_sentences

_MODIFIERS = (
    r"(?:(?:export|default|public|private|protected|static|async|abstract|pub|override)\s+)*"
)
_DEF = re.compile(
    rf"^\s*{_MODIFIERS}(?:def|class|function|func|fn|interface|type|struct|enum|trait|module)"
    r"\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"
)
_METHOD = re.compile(rf"^\s*{_MODIFIERS}([A-Za-z_$][\w$]*)\s*\(.*\)[^;=]*\{{\s*$")
_NOT_METHODS = frozenset({"if", "for", "while", "switch", "catch", "with", "return", "function"})
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_COMMENT = re.compile(r'^\s*(?:"""|\'\'\'|#(?![!\[])|//|/\*|\*(?!\*)|--|<!--)')
_COMMENT_MARKS = re.compile(
    r'^\s*(?:"""|\'\'\'|/\*\*?|\*/|\*|//+|#+|--|<!--)\s*|\s*(?:"""|\'\'\'|\*/|-->)\s*$'
)
_PROSE_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc")
_MAX_WINDOW = 4
_MAX_CLAIMS = 4
_PER_RUN = 2
_MAX_USES = 3
_COVERAGE_FLOOR = 0.34  # a quoted window covers at least a third of the question's weight
_TEST_DISCOUNT = 0.7  # a window in a test file, for a question that is not about tests


def _defined_name(line: str) -> str | None:
    match = _DEF.match(line)
    if match:
        return match.group(1)
    match = _METHOD.match(line)
    if match and match.group(1) not in _NOT_METHODS:
        return match.group(1)
    return None


def _doc_sentence(line: str, query: frozenset[str] = frozenset()) -> str:
    """The explaining text of a comment/docstring line: markers stripped, the sentence sharing
    most terms with the question (the first one on a tie)."""
    text = _COMMENT_MARKS.sub("", line.strip()).strip()
    sentences = re.split(r"(?<=\.)\s+", text)
    sentence = max(sentences, key=lambda one: len(set(_said(word_parts(one), query))))
    return sentence if len(sentence) <= 140 else sentence[:137].rstrip() + "..."


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


@dataclass(frozen=True)
class _Subject:
    name: str | None  # defined in the window or just above it
    defined_here: bool  # the definition line of ``name`` is one of the window's lines
    enclosing: str | None  # else the definition (or chunk symbol) the window sits inside
    doc: str | None  # an explaining sentence of the window or of its definition


@dataclass
class _Run:
    """Consecutive lines of one file, from one source or several adjacent ones, with what the
    scorer needs to know about each line."""

    path: str
    first_line: int
    lines: list[str]
    owners: list[Source]  # the source each line is quoted from
    ranks: list[int]  # that source's position in the request (retrieval rank)
    terms: list[set[str]]
    line_terms: list[list[str]]  # with repeats, in order
    is_def: list[bool]
    is_doc: list[bool]

    @classmethod
    def of(cls, ranked: list[tuple[int, Source]]) -> _Run:
        first_line = min(source.start_line for _, source in ranked)
        last_line = max(source.end_line for _, source in ranked)
        size = last_line - first_line + 1
        lines = [""] * size
        owners: list[Source | None] = [None] * size
        ranks = [0] * size
        for rank, source in sorted(ranked, key=lambda item: item[0]):  # best-ranked source wins
            count = source.end_line - source.start_line + 1
            for offset, text in enumerate(declared_lines(source.text, count)):
                at = source.start_line - first_line + offset
                if owners[at] is None:
                    lines[at], owners[at], ranks[at] = text, source, rank
        prose = ranked[0][1].path.lower().endswith(_PROSE_SUFFIXES)
        is_doc, in_docstring = [], False
        for line in lines:
            is_doc.append(
                bool(line.strip()) and (prose or in_docstring or bool(_COMMENT.match(line)))
            )
            if (line.count('"""') + line.count("'''")) % 2:
                in_docstring = not in_docstring
        is_def = [
            _defined_name(line) is not None or (prose and bool(_HEADING.match(line)))
            for line in lines
        ]
        line_terms = [word_parts(line) for line in lines]
        return cls(
            path=ranked[0][1].path,
            first_line=first_line,
            lines=lines,
            owners=[owner for owner in owners if owner is not None],  # runs have no holes
            ranks=ranks,
            terms=[set(found) for found in line_terms],
            line_terms=line_terms,
            is_def=is_def,
            is_doc=is_doc,
        )

    def number(self, index: int) -> int:
        return self.first_line + index

    def citations(self, first: int, last: int) -> list[dict[str, Any]]:
        """Lines first..last quoted verbatim, one citation per source they come from."""
        found = []
        start = first
        while start <= last:
            end = start
            while end < last and self.owners[end + 1] is self.owners[start]:
                end += 1
            quote = "\n".join(self.lines[start : end + 1])
            if quote.strip():
                found.append(
                    {
                        "source": self.owners[start].label,
                        "start_line": self.number(start),
                        "end_line": self.number(end),
                        "quote": quote,
                    }
                )
            start = end + 1
        return found

    def subject(self, first: int, last: int, query: frozenset[str]) -> _Subject:
        # The definition inside the window, else the nearest one just above it.
        order = [*range(first, last + 1), *range(first - 1, max(-1, first - 3), -1)]
        name_at = next((i for i in order if _defined_name(self.lines[i])), None)
        name = _defined_name(self.lines[name_at]) if name_at is not None else None
        enclosing = None if name else self._enclosing(first)
        defined_here = name_at is not None and first <= name_at <= last
        # The window's explaining lines read as one text (a sentence may span lines), else the
        # first explaining line just under the definition (a docstring).
        inside = " ".join(
            _COMMENT_MARKS.sub("", self.lines[i].strip()).strip()
            for i in range(first, last + 1)
            if self.is_doc[i]
        )
        below = range(name_at + 1, min(len(self.lines), name_at + 4)) if name_at is not None else []
        doc = (_doc_sentence(inside, query) if inside.strip() else None) or next(
            (
                sentence
                for index in below
                if self.is_doc[index]
                for sentence in [_doc_sentence(self.lines[index], query)]
                if sentence
            ),
            None,
        )
        return _Subject(name, defined_here, enclosing, doc)

    def _enclosing(self, at: int) -> str | None:
        """Name of the nearest definition above that is indented less than line ``at``; else the
        chunk's symbol when the run starts inside a definition; None at the top level."""
        depth = _indent(self.lines[at])
        for index in range(at - 1, -1, -1):
            line = self.lines[index]
            if line.strip() and _indent(line) < depth:
                name = _defined_name(line)
                if name:
                    return name
                depth = _indent(line)
        # A top-level line (an import, ``__all__``) is outside every definition: the chunk's
        # symbol names its first definition further down, and "In `that`" would be false.
        if depth == 0 and not self.path.lower().endswith(_PROSE_SUFFIXES):
            return None
        return self.owners[at].symbol


def _runs(sources: list[Source]) -> list[_Run]:
    """Sources grouped into runs: same path, overlapping or adjacent lines."""
    by_path: dict[str, list[tuple[int, Source]]] = defaultdict(list)
    for rank, source in enumerate(sources):
        if source.end_line >= source.start_line:
            by_path[source.path].append((rank, source))
    runs = []
    for ranked in by_path.values():
        ranked.sort(key=lambda item: (item[1].start_line, item[0]))
        current: list[tuple[int, Source]] = []
        reach = 0  # the last line the current run covers
        for item in ranked:
            if current and item[1].start_line > reach + 1:
                runs.append(_Run.of(current))
                current = []
            reach = max(reach, item[1].end_line) if current else item[1].end_line
            current.append(item)
        runs.append(_Run.of(current))
    return runs


@dataclass(frozen=True)
class _Window:
    score: float
    coverage: float
    run: _Run
    first: int
    last: int

    @property
    def rank(self) -> int:
        return self.run.ranks[self.first]


def _said(words: list[str], query: frozenset[str]) -> list[str]:
    """The question terms ``words`` say, one per word that says one, in order."""
    return [term for word in words for term in query if says(word, term)]


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


def _windows(run: _Run, said: list[list[str]], question: _Question) -> list[_Window]:
    found = []
    idf = question.idf
    useful = [bool(said[i]) or run.is_def[i] or run.is_doc[i] for i in range(len(run.lines))]
    # Like the reranker: quote the code, not a test restating it, unless tests are asked about.
    discount = _TEST_DISCOUNT if "test" not in question.terms and is_test_path(run.path) else 1.0
    for first in range(len(run.lines)):
        if not said[first]:
            continue  # a window starts on a line saying a question term, never on padding
        # Lines inside `wait_for` are about wait_for: its name's terms count as covered.
        around = run.subject(first, first, question.terms)
        name = around.name or around.enclosing or ""
        context = set(_said(word_parts(name), question.terms))
        named = name.rsplit(".", 1)[-1] in question.names
        covered: set[str] = set()
        repeats = 0.0
        for last in range(first, min(first + _MAX_WINDOW, len(run.lines))):
            if not run.lines[last].strip() or not useful[last]:
                break
            hits = said[last]
            repeats += sum(idf[term] for term in hits if term in covered)
            covered |= set(hits)
            evidence = covered | context
            if not covered or len(evidence) < question.needed:
                continue  # a claim quotes question terms, and more than one shared word
            weight = sum(idf[term] for term in evidence)
            span = range(first, last + 1)
            boost = 1.0
            # A definition of the subject, not one that merely precedes a matching line.
            boost += 0.3 if any(run.is_def[i] and said[i] for i in span) else 0.0
            boost += 0.2 if any(run.is_doc[i] for i in span) else 0.0
            boost += 0.3 if named else 0.0
            # Repeated terms add a little: the code that is *about* the subject says it often.
            score = (weight + 0.1 * repeats) * boost * discount / (1 + 0.15 * (last - first))
            found.append(_Window(score, weight / question.total, run, first, last))
    return found


_IMPORT = re.compile(r"\s*(?:from\s+\S+\s+import\b|import\b|#include\b|use\s|require\b)")
_SENTENCE_END = re.compile(r"[.!?:;]\s*(?:\"{3}|'{3}|\*/|-->)?\s*$")


def _to_sentence_end(window: _Window) -> _Window:
    """A quote stopping mid-sentence in a comment or docstring goes on to the sentence's end
    (within the window limit): 'When a timeout occurs,' needs its next line."""
    run, last = window.run, window.last
    while (
        run.is_doc[last]
        and last + 1 < len(run.lines)
        and run.is_doc[last + 1]
        and last + 1 - window.first < _MAX_WINDOW
        and not _SENTENCE_END.search(run.lines[last])
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
    if span is None or span[1] - span[0] >= _MAX_WINDOW + MAX_WIDEN:
        return None
    if _IMPORT.match(run.lines[span[0]]):
        return None  # an import names a thing; the quote worth showing is where it is used
    first, last = span
    if run.path.lower().endswith(_PROSE_SUFFIXES) and all(
        not line.strip() or _HEADING.match(line) for line in run.lines[first : last + 1]
    ):
        return None
    return replace(window, first=first, last=last)


def _definitions_first(windows: list[_Window]) -> list[_Window]:
    """A window defining a name another window uses is quoted before it; otherwise the order
    stays (best first)."""

    def defined(window: _Window) -> set[str]:
        lines = window.run.lines[window.first : window.last + 1]
        return {name for line in lines if (name := _defined_name(line))}

    def text(window: _Window) -> str:
        return "\n".join(window.run.lines[window.first : window.last + 1])

    def used_elsewhere(window: _Window) -> bool:
        names = defined(window)
        return any(
            re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text(other))
            for other in windows
            if other is not window
            for name in names
        )

    return sorted(windows, key=lambda window: not used_elsewhere(window))


def _pick(windows: list[_Window]) -> list[_Window]:
    """The best non-overlapping windows: at most 2 per run, 4 in all, none far below the best."""
    # Ties go to the source retrieval ranked higher (sources come best first), then earlier lines.
    ordered = sorted(windows, key=lambda w: (-w.score, w.rank, w.first))
    picked: list[_Window] = []
    for best in ordered:
        if len(picked) == _MAX_CLAIMS or best.score < 0.35 * ordered[0].score:
            break
        window = _whole(_to_sentence_end(best))
        if window is None:
            continue  # a fragment that cannot be widened to a whole statement says nothing
        same = [p for p in picked if p.run is window.run]
        if len(same) >= _PER_RUN:
            continue
        if any(window.first <= p.last and p.first <= window.last for p in same):
            continue
        picked.append(window)
    return picked


def _owner(symbol: str | None, name: str | None) -> str:
    """`` (Owner)`` for a name defined inside a chunk whose symbol says more."""
    if not symbol or symbol == name or (name and symbol.endswith(f".{name}")):
        return ""
    return f" ({symbol.removesuffix(f'.{name}') if name else symbol})"


def _claim_text(window: _Window, query: frozenset[str]) -> str:
    run = window.run
    subject = run.subject(window.first, window.last, query)
    name, doc = subject.name, subject.doc
    if name and subject.defined_here:
        where = f"{run.path}{_owner(run.owners[window.first].symbol, name)}"
        return f"`{name}` in {where}: {doc}" if doc else f"`{name}` is defined in {where}:"
    first, last = run.number(window.first), run.number(window.last)
    lines = f"line {first}" if first == last else f"lines {first}-{last}"
    enclosing = name or subject.enclosing  # a name defined just above encloses the window
    where = f"In `{enclosing}` ({run.path})" if enclosing else run.path
    return f"{where}, {lines}: {doc}" if doc else f"{where}, {lines}:"


def _claim(text: str, run: _Run, first: int, last: int) -> dict[str, Any]:
    return {"kind": "claim", "text": text, "citations": run.citations(first, last)}


def _reply(intro: str, claims: list[dict[str, Any]]) -> str:
    if not claims:
        return json.dumps({"spans": [], "refuse": {"reason": "no_span_in_retrieval"}})
    return json.dumps({"spans": [{"kind": "prose", "text": intro}, *claims], "refuse": None})


def answer(question: str, sources: list[Source]) -> str:
    """Reply (model JSON shape) quoting the lines that best match the question, or a refusal."""
    query = frozenset(word_parts(question))
    runs = _runs(sources)
    if not query or not runs or cannot_answer(*_missing(question, sources)):
        return _reply("", [])
    said = {id(run): [_said(words, query) for words in run.line_terms] for run in runs}
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
    asked = _Question(query, names, idf, sum(idf.values()), min(2, len(present)))
    windows = [
        window
        for run in runs
        for window in _windows(run, said[id(run)], asked)
        if window.coverage >= _COVERAGE_FLOOR and not _echoes(window, question)
    ]
    picked = _definitions_first(_pick(windows))
    claims = [_claim(_claim_text(w, query), w.run, w.first, w.last) for w in picked]
    return _reply("These lines of the indexed code best match the question:", claims)


def missing_terms(question: str, sources: list[Source]) -> list[str]:
    """The question's words (as typed) that the sources never say: the offline answerer cannot
    quote what is not there."""
    return _missing(question, sources)[0]


def _missing(question: str, sources: list[Source]) -> tuple[list[str], int]:
    said = {word for source in sources for word in word_parts(source.text)}
    text = "\n".join(source.text for source in sources).lower()
    return missing_words(question, said, text)


def _echoes(window: _Window, question: str) -> bool:
    """Lines that repeat the question itself (a README example, a test's list of questions)
    match it best and answer nothing."""
    asked = " ".join(question.lower().split()).rstrip("?!. ")
    if len(asked.split()) < 3:
        return False
    quoted = " ".join(" ".join(window.run.lines[window.first : window.last + 1]).lower().split())
    return asked in quoted


# ---------------------------------------------------------------------------------------------
# Hover


def _mention(run: _Run, name: str, skip: range = range(0)) -> int | None:
    """Index of the first line that mentions ``name`` as a whole word without defining it; a
    line that uses it beats one that only imports it."""
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    mentions = [
        i
        for i, line in enumerate(run.lines)
        if i not in skip and not run.is_def[i] and word.search(line)
    ]
    used = [i for i in mentions if not _IMPORT.match(run.lines[i])]
    return used[0] if used else (mentions[0] if mentions else None)


def _signature(run: _Run, name: str, definition: Source) -> int | None:
    """Index of the line defining ``name`` (in the definition's own lines first), else of its
    first mention."""
    own = [i for i, owner in enumerate(run.owners) if owner is definition]
    others = [i for i in range(len(run.lines)) if run.owners[i] is not definition]
    for index in [*own, *others]:
        if _defined_name(run.lines[index]) == name:
            return index
    return _mention(run, name)


def _definition_window(run: _Run, at: int) -> tuple[int, int]:
    """The signature (continued while brackets are open) plus its doc comment, above or below."""
    last, depth = at, 0
    while last < len(run.lines):
        line = run.lines[last]
        depth += line.count("(") + line.count("[") - line.count(")") - line.count("]")
        if depth <= 0 or last - at >= 3:
            break
        last += 1
    last = min(last, len(run.lines) - 1)
    first = at
    if last + 1 < len(run.lines) and run.is_doc[last + 1] and last + 1 - at < _MAX_WINDOW:
        last += 1  # a docstring right under the signature
    else:
        while first > 0 and run.is_doc[first - 1] and at - first < 2:
            first -= 1  # a doc comment right above it
    return first, last


def hover_answer(symbol: str, definition: Source | None, uses: list[Source]) -> str:
    """Extractive hover reply: the definition (signature + first doc line) and cited usages."""
    name = re.split(r"[.#:]+", symbol)[-1] or symbol
    runs = _runs([definition, *uses] if definition is not None else uses)
    claims = []
    shown: tuple[_Run | None, range] = (None, range(0))
    home = next((run for run in runs if any(o is definition for o in run.owners)), None)
    if home is not None and definition is not None:
        at = _signature(home, name, definition)
        if at is not None:
            first, last = _definition_window(home, at)
            doc = next(
                (_doc_sentence(home.lines[i]) for i in range(first, last + 1) if home.is_doc[i]),
                "",
            )
            text = f"`{symbol}` is defined in {home.path}" + (f": {doc}" if doc else ":")
            claims.append(_claim(text, home, first, last))
            shown = (home, range(first, last + 1))
    used = 0
    for run in runs:
        skip = shown[1] if run is shown[0] else range(0)
        at = _mention(run, name, skip)
        if at is None:
            continue
        used += 1
        if used > _MAX_USES:
            break
        owner = _owner(run.owners[at].symbol, None)
        claims.append(_claim(f"Used in {run.path}{owner}:", run, at, at))
    return _reply("Quoted from the indexed code:", claims)
