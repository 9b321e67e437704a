"""A question answered for one root: the editor's file and the symbol at its cursor boost
retrieval, unless the file is private or not indexed yet."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

# Turn is the doors' too: an editor's or agent's earlier exchanges are handed on as Turns.
from ..answer.followup import Turn
from .request_paths import RootParts, relative
from .tools import ToolParts

if TYPE_CHECKING:
    from ..answer.partial import OnSpans
    from ..answer.pipeline import Answerer
    from ..core.answers import Answered, Refused
    from ..core.positions import Encoding
    from .upkeep import Upkeep


class AskParts(RootParts, ToolParts, Protocol):
    """What answering uses of a Session (the answerer is built lazily, in the worker thread)."""

    @property
    def upkeep(self) -> Upkeep: ...

    @property
    def answerer(self) -> Answerer: ...


def ask(
    parts: AskParts,
    question: str,
    path: Path | None,
    text: str | None,
    position: tuple[int, int] | None,
    *,
    encoding: Encoding = "utf-16",
    cancel: threading.Event,
    history: Sequence[Turn] = (),
    stage: Callable[[str], None] | None = None,
    on_spans: OnSpans | None = None,
) -> Answered | Refused:
    """The answer. ``text`` may be a region of the file, with ``position`` relative to it;
    ``history`` is the conversation a follow-up continues; ``stage`` hears each step as it
    starts; ``on_spans`` each snapshot of verified spans as the reply streams (partial results).
    A model that can call tools gets this root's (tools.py) for its loop."""
    from ..core.answers import Refused  # pydantic: kept off the start-up path
    from .tools import RootTools

    context: dict[str, Any] = {}
    if path is not None:
        context["path"] = relative(parts.root, path)
        if context["path"] in parts.upkeep.indexer.pending:
            refused = Refused(
                reason="stale_index",
                detail=f"{context['path']} is not indexed yet ({parts.upkeep.note()})",
            )
            return refused
        private = parts.privacy().path_refusal(context["path"]) is not None
        if text is not None and position is not None and not private:
            from ..ingest.workers import SymbolQuery, symbol_isolated

            query = SymbolQuery(context["path"], text, *position, encoding)
            at = symbol_isolated(query)  # parsed in a worker: the buffer may crash it
            if at is not None and not is_credential(at.enclosing or at.name):
                context["symbol"] = at.enclosing or at.name
    answer = parts.answerer.ask(
        question,
        context=context or None,
        cancel=cancel,
        index_note=parts.upkeep.note(),
        history=history,
        stage=stage,
        tools=RootTools(parts),
        on_spans=on_spans,
    )
    if isinstance(answer, Refused) and answer.reason == "no_span_in_retrieval":
        note = parts.upkeep.note()
        if parts.upkeep.indexing and note:  # nothing found yet may be nothing indexed yet
            answer = answer.model_copy(update={"reason": "stale_index", "detail": note})
    return answer


def is_credential(word: str) -> bool:
    """A word under the cursor that is a key itself must not reach retrieval or a model."""
    from ..ingest.secrets import find_credential

    return find_credential(word) is not None
