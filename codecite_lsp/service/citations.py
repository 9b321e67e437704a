"""Citations after the answer: one citation resolved where its lines are now, and past answers
with every citation re-resolved. A private file (secret, git-ignored, holding a credential, or
reached through a symlink to one) is gone without being read: a forged or old citation must not
open ``.env``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .errors import SessionError, check
from .request_paths import RootParts, absolute

if TYPE_CHECKING:
    from ..core.answers import Resolution
    from ..core.responses import HistoryRecord


class CitationParts(RootParts, Protocol):
    """What resolving citations uses of a Session: also where its history is kept."""

    @property
    def index_dir(self) -> Path: ...


def resolve(
    parts: CitationParts,
    citation: Mapping[str, Any],
    read_current: Callable[[], str | None],
    *,
    cancel: threading.Event | None = None,
) -> Resolution:
    """Where a citation's lines are now (exact / moved / stale / gone), with those lines."""
    from pydantic import ValidationError

    from ..core.answers import Citation, Gone  # pydantic: kept off the start-up path
    from ..verify.anchors import resolve as resolve_citation
    from . import shaping

    try:
        parsed = Citation.model_validate(
            {key: value for key, value in citation.items() if key in Citation.model_fields}
        )
    except ValidationError as exc:
        raise SessionError(f"not a citation: {shaping.first_error(exc)}") from None
    absolute(parts.root, parsed.path)  # refuses a path outside the root
    why = parts.privacy().file_refusal(parsed.path)
    if why is not None:
        return Gone(path=parsed.path, reason=why)
    current_text = read_current()
    return shaping.with_lines(resolve_citation(parsed, current_text), current_text)


def answer_times(parts: CitationParts, *, cancel: threading.Event) -> list[str]:
    """The time of each of one root's past answers, newest first, from the history's index."""
    from ..answer.history import History

    return History(parts.index_dir).times()


def past_answers(
    parts: CitationParts,
    limit: int,
    read: Callable[[Path], str | None],
    offset: int = 0,
    *,
    cancel: threading.Event,
) -> list[HistoryRecord]:
    """One root's page of past answers (newest first after ``offset``), every citation
    re-resolved against what the user sees now; a file now private is never read."""
    from ..answer.history import History
    from . import shaping

    privacy = parts.privacy()
    private: dict[str, str] = {}
    shown: dict[str, str | None] = {}

    def read_rel(rel: str) -> str | None:
        if rel not in shown:
            why = privacy.file_refusal(rel)
            if why is not None:
                private[rel] = why
            shown[rel] = None if why is not None else read(absolute(parts.root, rel))
        return shown[rel]

    records = []
    for item in History(parts.index_dir).resolved(parts.root, read_rel, limit, offset):
        check(cancel)
        records.append(shaping.history_record(item, parts.root, shown, private))
    return records[::-1]
