"""The symbol at a position explained for one root, with citation links: the hovered file's own
definition first, a function's local from its own function, never a private file's word."""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from .ask import is_credential
from .errors import check
from .request_paths import relative

if TYPE_CHECKING:
    from ..answer.hover import AskModel
    from ..core.positions import Encoding
    from .session import Session


def explain(
    session: Session,
    path: Path,
    text: str,
    line: int,
    character: int,
    encoding: Encoding,
    cancel: threading.Event,
    *,
    file_links: bool = False,
    line_in_file: int | None = None,
) -> str | None:
    """Markdown explaining the symbol at ``line``/``character`` of ``text`` (the file's line
    ``line_in_file`` when ``text`` is a region of it), or None; its citation links are ``file:``
    URIs with ``file_links`` (a client not following ``command:`` links), else
    ``command:codecite.openCitation`` links (VS Code: they follow moved lines)."""
    from ..answer.hover import (
        Hovered,
        command_link,
        explain_local,
        explain_symbol,
        file_link,
        only_an_attribute,
    )
    from ..ingest.reserved import reserved
    from ..ingest.workers import SymbolQuery, symbol_isolated

    rel = relative(session.root, path)
    if session.privacy().path_refusal(rel):
        return None  # the word under the cursor may be the secret itself
    # Parsed in a worker process: an unsaved buffer that crashes the grammar costs the
    # definitions around the cursor, not the server.
    at = symbol_isolated(SymbolQuery(rel, text, line, character, encoding))
    if at is None or is_credential(at.name):
        return None  # a key typed in an unsaved buffer must not reach retrieval or a model
    symbol = at.name
    check(cancel)
    # `self`, a keyword or a builtin: "used in" would be any line of the repository; listed
    # only when the repository defines the name itself (a method called `filter`).
    given = reserved(symbol, rel)
    hovered = Hovered(rel, (line if line_in_file is None else line_in_file) + 1)
    link = functools.partial(file_link if file_links else command_link, root=session.root)
    if at.enclosing_lines is not None and not given and not only_an_attribute(text, line, symbol):
        # A function's parameter or local: its own binding and uses, never other functions'
        # names alike. The enclosing lines are the buffer's (a region of it, for a big one).
        shift = hovered.line - 1 - line
        first, last = (number + shift for number in at.enclosing_lines)
        own = session.retriever.retrieve_lines(rel, first, last)
        markdown = explain_local(symbol, own, link, hovered)
        if markdown is not None:
            return markdown
        check(cancel)
    found = session.retriever.retrieve_for_symbol(symbol, rel, uses=not given, line=hovered.line)
    if given and found.selected:
        found = session.retriever.retrieve_for_symbol(symbol, rel, line=hovered.line)
    check(cancel)
    # The place matters as far as the definition does: the file's own come before another
    # file's, the lines around the hovered one first.
    around = next(
        (
            r.chunk.content_hash
            for r in found.selected
            if r.chunk.path == rel and r.chunk.start_line <= hovered.line <= r.chunk.end_line
        ),
        "",
    )
    hashes = tuple(result.chunk.content_hash for result in found.selected)
    key = (symbol, rel, around, hashes, file_links)
    if key not in session.hovers:
        session.hovers[key] = explain_symbol(
            symbol,
            found,
            link,
            note=session.upkeep.note(),
            cancel=cancel,
            ask_model=_model(session, rel, symbol),
            model_wait=session.config.hover_timeout,
            hovered=hovered,
        )
    return session.hovers[key]


def _model(session: Session, rel: str, symbol: str) -> AskModel | None:
    """The configured model answers hovers through the full pipeline (gate, retry)."""
    if session.config.model == "extractive":
        return None
    context = {"path": rel, "symbol": symbol}
    return lambda question, cancel: session.answerer.ask(question, context, cancel)
