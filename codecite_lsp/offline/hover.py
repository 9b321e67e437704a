"""The offline hover (pure): the hovered name's definition (its signature and first doc
sentence) and a few cited uses, or, for a name a function binds itself (a parameter, a local),
where it binds it and its uses in that function only. Same reply shape and gate as an answer.
"""

from __future__ import annotations

import re

from ..core.records import Source
from ..core.terms import NOT_AFTER_WORD, NOT_BEFORE_WORD, WORD_CLASS, assignment, word_pattern
from .definitions import CALLABLE_KINDS, Defined
from .extractive import IMPORT, MAX_WINDOW, SENTENCE_END, claim, reply
from .source_runs import COMMENT_MARKS, Run, doc_sentence, read_runs
from .statements import MAX_WIDEN, opens_a_literal, whole_code, without_messages

_DOC_REACH = 40  # lines of a doc comment above a definition looked through for its start
_MAX_USES = 3


def _mention(run: Run, name: str, skip: range = range(0), *, code: bool = False) -> int | None:
    """Index of the first line that mentions ``name`` as a whole word without defining it (in
    code only, with ``code``: not in comments, docstrings, prose or a message string, `throw
    new TypeError('app.use() requires a middleware function')`); a call beats another use,
    which beats an import."""
    word = word_pattern(name)
    call = re.compile(rf"{NOT_AFTER_WORD}{re.escape(name)}\s*\(")
    assigned = assignment(name)  # gives it its value: no use of it
    mentions = [
        i
        for i, line in enumerate(run.lines)
        if i not in skip
        and not run.is_def[i]
        and not assigned.match(line)
        and not (code and run.is_doc[i])
        and word.search(without_messages(line) if code else line)
    ]
    calls = [i for i in mentions if call.search(run.lines[i])]
    used = [i for i in mentions if not IMPORT.match(run.lines[i])]
    return next(iter([*calls, *used, *mentions]), None)


def _signature(run: Run, name: str, definition: Source) -> int | None:
    """Index of the line defining ``name`` (in the definition's own lines first), else of the
    line assigning it, else of its first mention."""
    heads = [d for d in run.defined if d.name == name]
    own = [d for d in heads if run.owners[d.head] is definition]
    found = next(iter([*own, *heads]), None)
    if found is not None:
        return found.head
    # A module-level assignment before a function's local of the same name (`var res = this`).
    given = [assignment(name, top_level=True), assignment(name)]
    assigned = next(
        (
            i
            for pattern in given
            for i, line in enumerate(run.lines)
            if not run.is_doc[i] and pattern.match(line)
        ),
        None,
    )
    return assigned if assigned is not None else _mention(run, name)


def _definition_windows(run: Run, at: int) -> list[tuple[int, int]]:
    """What a hover quotes of the definition at ``at``: the signature (up to 4 lines) with a
    docstring right under it, or with the first sentence of the doc comment above it (a Go,
    Rust or Java doc comment starts with its summary; its last lines are mid-paragraph): one
    window when they meet, else two."""
    ends = [d.signature_end for d in run.defined if d.head == at]
    # An assignment: its whole statement when it is short (`parts = [`, its items).
    last = min(ends[0], at + MAX_WINDOW - 1) if ends else _statement_end(run, at)
    # A docstring right under a signature; a comment under an assignment is the next line's.
    if ends and last + 1 < len(run.lines) and run.is_doc[last + 1] and last + 1 - at < MAX_WINDOW:
        return [(at, last + 1)]
    top = at
    # A docstring closing right above documents what encloses it (`def quote(...)`), not the
    # local assigned under it.
    docstring_above = at > 0 and run.lines[at - 1].rstrip().endswith(('"""', "'''"))
    while not docstring_above and top > 0 and run.is_doc[top - 1] and at - top < _DOC_REACH:
        top -= 1
    if top == at:
        return [(at, last)]
    end = top  # the summary sentence's last line
    while end + 1 < at and end - top + 1 < MAX_WINDOW and not SENTENCE_END.search(run.lines[end]):
        end += 1
    return [(top, last)] if end + 1 == at else [(top, end), (at, last)]


def _statement_end(run: Run, at: int) -> int:
    """The last line of the value given at line ``at`` (`parts = [` and its items) when it is
    short, else ``at`` (a block's head: `var app = function(req) {`, `for x in xs:`)."""
    if not opens_a_literal(run.lines[at]):
        return at
    code = ["" if doc else line for line, doc in zip(run.lines, run.is_doc, strict=True)]
    span = whole_code(code, at, at)
    short = span is not None and span[0] == at and span[1] - at < MAX_WINDOW + MAX_WIDEN
    return span[1] if span is not None and short else at


def _doc_text(run: Run, windows: list[tuple[int, int]]) -> str:
    """The first sentence of the explaining lines in ``windows``, markers stripped."""
    said = " ".join(
        COMMENT_MARKS.sub("", run.lines[i].strip()).strip()
        for first, last in windows
        for i in range(first, last + 1)
        if run.is_doc[i]
    )
    return doc_sentence(said) if said.strip() else ""


def hover_answer(symbol: str, definition: Source | None, uses: list[Source]) -> str:
    """Extractive hover reply: the definition (signature + first doc line) and cited usages."""
    name = re.split(r"[.#:]+", symbol)[-1] or symbol
    runs = read_runs([definition, *uses] if definition is not None else uses)
    claims = []
    shown: tuple[Run | None, range] = (None, range(0))
    home = next((run for run in runs if any(o is definition for o in run.owners)), None)
    if home is not None and definition is not None:
        at = _signature(home, name, definition)
        if at is not None:
            windows = _definition_windows(home, at)
            doc = _doc_text(home, windows)
            text = f"`{symbol}` is defined in {home.path}" + (f": {doc}" if doc else ":")
            citations = [c for first, last in windows for c in home.citations(first, last)]
            claims.append({"kind": "claim", "text": text, "citations": citations})
            shown = (home, range(windows[0][0], windows[-1][1] + 1))
    used = 0
    for run in runs:
        skip = shown[1] if run is shown[0] else range(0)
        at = _mention(run, name, skip, code=True)
        if at is None:
            continue
        used += 1
        if used > _MAX_USES:
            break
        owner = run.within(at)
        where = f"{run.path} ({owner})" if owner else run.path
        claims.append(claim(f"Used in {where}:", run, at, at))
    return reply("Quoted from the indexed code:", claims)


# ---------------------------------------------------------------------------------------------
# Hover on a name a function binds itself: a parameter or a local

# Where a body binds a name besides an assignment: `for k, v in`, `for (const x of`, `with ...
# as x`, `except E as x`, Go's `x, err :=`.
_BINDINGS = (
    rf"\bfor\b[^\n]*?(?<![{WORD_CLASS}.]){{n}}{NOT_BEFORE_WORD}[^\n]*?\s(?:in|of)\b",
    rf"\bas\s+{{n}}{NOT_BEFORE_WORD}",
    rf"(?<![{WORD_CLASS}.]){{n}}(?:\s*,\s*[{WORD_CLASS}]+)*\s*:=",
)
# A parameter in a parameter list: first or after a comma (`*args`, `**kw`, `&x`, `...rest`,
# `mut x` too), not a type after `:` nor a default after `=`.
_PARAMETER = (
    r"(?:^|[(,])\s*(?:\*{{1,2}}|&|\.\.\.)?(?:mut\s+)?{n}" + NOT_BEFORE_WORD + r"(?!\s*[.(])"
)
_GO_RECEIVER = re.compile(r"\s*func\s*\(")


def local_hover_answer(symbol: str, sources: list[Source], line: int) -> str | None:
    """The hover of a name that a callable around file ``line`` binds itself (a parameter, a
    local): where it binds it and its uses in that callable only. None when none binds it (a
    module's name, an attribute): the uses of other functions' names alike are never listed as
    its own."""
    name = re.split(r"[.#:]+", symbol)[-1] or symbol
    run = next(
        (r for r in read_runs(sources) if r.first_line <= line < r.first_line + len(r.lines)),
        None,
    )
    if run is None:
        return None
    at = line - run.first_line
    scopes = sorted(
        (d for d in run.defined if d.kind in CALLABLE_KINDS and d.head <= at <= d.end),
        key=lambda d: d.end - d.head,
    )
    for scope in scopes:  # innermost first: a closure's own before its parent's
        if scope.name == name:
            return None  # the function itself
        bound = _parameter(run, scope, name)
        kind = "a parameter"
        if bound is None:
            bound, kind = _local(run, scope, name), "a local"
        if bound is None:
            continue
        end = bound if kind == "a parameter" else _statement_end(run, bound)
        word = re.compile(rf"(?<![{WORD_CLASS}.]){re.escape(name)}{NOT_BEFORE_WORD}")
        uses = [
            i
            for i in range(scope.signature_end + 1, scope.end + 1)
            if not bound <= i <= end
            and not run.is_doc[i]
            and word.search(without_messages(run.lines[i]))
        ]
        claims = [claim(f"`{name}` is {kind} of `{scope.name}` in {run.path}:", run, bound, end)]
        claims += [
            claim(f"Used in {run.path} ({scope.name}):", run, i, i) for i in uses[:_MAX_USES]
        ]
        return reply("Quoted from the indexed code:", claims)
    return None


def _parameter(run: Run, scope: Defined, name: str) -> int | None:
    """The line of ``scope``'s signature listing ``name`` as a parameter (of its own list, or
    of a Go method's receiver), or None."""
    text = "\n".join(run.lines[scope.head : scope.signature_end + 1])
    opens = []
    receiver = _GO_RECEIVER.match(text)
    if receiver is not None:
        opens.append(receiver.end() - 1)
    own = re.search(rf"{word_pattern(scope.name).pattern}[^(\n]*\(", text)
    if own is not None:
        opens.append(own.end() - 1)
    listed = re.compile(_PARAMETER.format(n=re.escape(name)), re.MULTILINE)
    for start in opens:
        found = listed.search(text, start, _closing(text, start))
        if found is not None:
            return scope.head + text.count("\n", 0, found.end())
    return None


def _closing(text: str, start: int) -> int:
    """The index just past the bracket closing the one opened at ``start``."""
    depth = 0
    for index in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return index + 1
    return len(text)


def _local(run: Run, scope: Defined, name: str) -> int | None:
    """The first line of ``scope``'s body binding ``name`` (not an attribute's), or None."""
    given = assignment(name)
    binds = [re.compile(pattern.format(n=re.escape(name))) for pattern in _BINDINGS]
    for i in range(scope.signature_end + 1, scope.end + 1):
        text = run.lines[i]
        if run.is_doc[i] or text.lstrip().startswith(("self.", "this.")):
            continue
        if given.match(text) or any(bind.search(text) for bind in binds):
            return i
    return None
