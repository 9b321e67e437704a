"""Hover: the symbol's definition and uses -> an explanation whose every citation passed the gate
-> markdown with links that open the cited lines.

The offline ("extractive") explanation goes through the same gate as a model's, so a hover can
never show a quote that is not in the code.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote

from ..core.answers import Answered, Citation, Refused
from ..core.records import Source, sources_from_results
from ..core.terms import word_pattern
from ..retrieve.on_disk import index_differs
from ..retrieve.retriever import Retrieval

log = logging.getLogger(__name__)

OPEN_CITATION = "codecite.openCitation"

Link = Callable[[Citation], str]
AskModel = Callable[[str, threading.Event], "Answered | Refused"]


def command_link(citation: Citation, root: Path) -> str:
    """VS Code follows ``command:`` URIs in trusted hover markdown; arguments are a JSON list.
    ``root`` tells the server which workspace folder the relative path belongs to."""
    payload = {**citation.model_dump(mode="json"), "root": str(root)}
    argument = json.dumps([payload], separators=(",", ":"))
    return f"command:{OPEN_CITATION}?{quote(argument, safe='')}"


def file_link(citation: Citation, root: Path) -> str:
    """A ``file:`` URI with the line as its fragment, for clients that do not follow ``command:``
    URIs (Neovim: ``gx`` and the plugin's mapping open it). Short: a hover's line never wraps
    around a long JSON argument."""
    return f"{(root / citation.path).as_uri()}#L{citation.start_line}"


def question_for(symbol: str) -> str:
    return f"What does `{symbol}` do, and where is it used?"


def explain_symbol(
    symbol: str,
    found: Retrieval,
    link: Link,
    *,
    note: str | None,
    cancel: threading.Event,
    ask_model: AskModel | None = None,
    model_wait: float,
    hovered: Hovered | None = None,
) -> str | None:
    """Markdown for the hover of ``symbol`` (``hovered`` there), or None when the index knows
    nothing about it.

    ``ask_model(question, cancel)`` is the configured model's pipeline (None: extractive). A
    model that fails, refuses or has not answered within ``model_wait`` seconds falls back to the
    extractive explanation: a hover should still say what the code shows, and soon.
    """
    from .render import answer_to_markdown

    if not found.selected:
        if found.on_disk is not None and found.on_disk.left:
            return f"_codecite: {index_differs(found.on_disk)}._"
        return f"_codecite: `{symbol}` is not indexed yet ({note})._" if note else None
    sources = sources_from_results(found.selected)
    answer: Answered | Refused | None = None
    if ask_model is not None:
        answer = _ask_within(ask_model, question_for(symbol), cancel, model_wait)
        if isinstance(answer, Refused):
            log.info("model hover for %s refused (%s); using extractive", symbol, answer.reason)
            answer = None
    if answer is None:
        answer = extractive_answer(symbol, sources, hovered)
    if answer is None:
        return None
    if note and isinstance(answer, Answered):
        answer = answer.model_copy(update={"note": note})
    return f"**{symbol}**\n\n{answer_to_markdown(answer, link)}"


def _ask_within(
    ask_model: AskModel, question: str, cancel: threading.Event, wait: float
) -> Answered | Refused | None:
    """The model's answer, or None if it is not there within ``wait`` seconds (the call is then
    cancelled) or the hover itself was cancelled."""
    stop = threading.Event()  # ends the model call: the editor's cancel, or the deadline
    done = threading.Event()
    answers: list[Answered | Refused] = []

    def run() -> None:
        try:
            answers.append(ask_model(question, stop))
        except Exception:  # the extractive explanation is still there to show
            log.exception("model hover failed")
        finally:
            done.set()

    threading.Thread(target=run, name="codecite-hover-model", daemon=True).start()
    deadline = time.monotonic() + wait
    while not done.wait(0.05):
        if cancel.is_set() or time.monotonic() >= deadline:
            stop.set()
            if not cancel.is_set():
                log.info("the model took over %g s for a hover; using extractive", wait)
            return None
    return answers[0] if answers else None


class Hovered(NamedTuple):
    """Where the hovered name is: a file and its line (1-based)."""

    path: str
    line: int


def definition_of(
    symbol: str, sources: list[Source], hovered: Hovered | None = None
) -> Source | None:
    """The first source holding the definition of ``symbol``: a chunk named after it, a chunk
    whose outline defines it (a small file is one chunk without a symbol of its own), or one
    whose line assigns it (a constant). The ``hovered`` file's own come first, as a language's
    scope would have it: the lines around the hovered one giving it a value (a function's
    local), then the file's definitions and module-level values (express's application.js says
    `var app = exports = module.exports = {}`; its `app` is not the `var app = function` that
    express.js declares), then any file's."""
    from ..core.terms import assignment

    if hovered is None:
        return _defining(symbol, sources)
    name = symbol.rsplit(".", 1)[-1]
    here = [s for s in sources if s.result.chunk.path == hovered.path]
    around = [
        s
        for s in here
        if s.result.chunk.start_line <= hovered.line <= s.result.chunk.end_line
        and assignment(name).search(s.result.chunk.text)
    ]
    if around:
        return around[0]
    return (here and _defining(symbol, here, local=True)) or _defining(symbol, sources)


def _defining(symbol: str, sources: list[Source], *, local: bool = False) -> Source | None:
    """``definition_of`` among ``sources``; ``local``: a module-level assignment is as good as
    a named definition (the same scope), and a function's local of that name is none. The
    outlines of the sources before the first named one are parsed in one round trip to the
    parse worker (ingest/readback.py)."""
    from ..core.terms import assignment
    from ..ingest.readback import read_isolated
    from ..ingest.syntax import outline

    name = symbol.rsplit(".", 1)[-1]
    module_level = assignment(name, top_level=True)
    named = next(
        (
            i
            for i, s in enumerate(sources)
            if any(
                sym.rsplit(".", 1)[-1] == name
                for sym in s.result.symbols_within(
                    s.result.chunk.start_line, s.result.chunk.end_line
                )
            )
            or (local and module_level.search(s.result.chunk.text))
        ),
        len(sources),
    )
    outlines = read_isolated(
        outline, [(s.result.chunk.path, s.result.chunk.text) for s in sources[:named]]
    )
    for source, found in zip(sources, outlines, strict=False):
        if any(d.symbol.rsplit(".", 1)[-1] == name for d in found):
            return source
    if named < len(sources):
        return sources[named]
    if local:
        return None
    # A constant or variable: the outline lists no definition of it. One at module scope
    # before a function's local of that name.
    given = [module_level, assignment(name)]
    return next(
        (s for pattern in given for s in sources if pattern.search(s.result.chunk.text)), None
    )


def extractive_answer(
    symbol: str, sources: list[Source], hovered: Hovered | None = None
) -> Answered | None:
    """The offline explanation of ``symbol`` (``hovered`` there), checked by the citation gate
    like any model reply."""
    from ..offline.hover import hover_answer

    definition = definition_of(symbol, sources, hovered)
    uses = [source for source in sources if source is not definition]
    return _verified(symbol, hover_answer(symbol, definition, uses), sources)


def only_an_attribute(text: str, line: int, name: str) -> bool:
    """Whether ``name`` is only an attribute on line ``line`` of ``text`` (`self.parts`,
    `req.body`): an object's, not a local's."""
    lines = text.split("\n")
    said = line < len(lines) and lines[line]
    if not said:
        return False
    starts = [m.start() for m in word_pattern(name).finditer(said)]
    return bool(starts) and all(said[:start].rstrip().endswith(".") for start in starts)


def explain_local(symbol: str, found: Retrieval, link: Link, hovered: Hovered) -> str | None:
    """Markdown for the hover of a parameter or a local of the function around ``hovered``
    (``found``: that function's lines), or None when that function does not bind ``symbol``.
    Offline, and checked by the citation gate like any reply."""
    from ..offline.hover import local_hover_answer
    from .render import answer_to_markdown

    sources = sources_from_results(found.selected)
    raw = local_hover_answer(symbol, sources, hovered.line) if sources else None
    answer = _verified(symbol, raw, sources) if raw is not None else None
    return f"**{symbol}**\n\n{answer_to_markdown(answer, link)}" if answer else None


def _verified(symbol: str, raw: str, sources: list[Source]) -> Answered | None:
    from ..verify.gate import GatePassed, verify

    result = verify(raw, sources)
    if not isinstance(result, GatePassed):
        # Usually nothing quotable (no definition, no mention): show nothing rather than guess.
        log.info("no verified hover for %s: %s", symbol, getattr(result, "detail", result))
        return None
    return Answered(spans=result.spans)
