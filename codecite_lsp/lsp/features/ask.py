"""``codecite/ask`` (and the ``codecite.ask`` command): a question, maybe with the editor's file
and cursor and the conversation it follows, answered by the root's Answerer; its stages are
reported as work-done progress when there is one, and its verified spans as partial results
(``$/progress`` on the client's ``partialResultToken``) as the reply streams."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...service.ask import Turn
from ...service.ask import ask as ask_root
from .. import region
from ..params import AskParams, uri_to_path

if TYPE_CHECKING:
    from ...core.answers import Answered, Refused
    from ...core.positions import Encoding
    from ...service.session import Session
    from ..progress import AskProgress, PartialResults
    from . import Host


async def ask(
    host: Host,
    params: AskParams,
    progress: AskProgress | None = None,
    partial: PartialResults | None = None,
) -> dict[str, Any]:
    if params.uri is not None:
        session = host.session_for(params.uri)
        path: Path | None = uri_to_path(params.uri)
    else:
        session, path = host.default_session(), None
    answer = await host.run(_ask, host, session, params, path, host.encoding(), progress, partial)
    dumped: dict[str, Any] = answer.model_dump(mode="json")
    return dumped


def _ask(
    host: Host,
    session: Session,
    params: AskParams,
    path: Path | None,
    encoding: Encoding,
    progress: AskProgress | None,
    partial: PartialResults | None,
    *,
    cancel: threading.Event,
) -> Answered | Refused:
    """In a worker thread: the buffer may be large, and only the cursor's region is used."""
    text = host.current_text(path) if path is not None else None
    position: tuple[int, int] | None = None
    if text is not None and params.position is not None:
        found = region.around(text, params.position.line)
        text, position = (
            (None, None) if found is None else (found[0], (found[1], params.position.character))
        )
    return ask_root(
        session,
        params.question,
        path,
        text,
        position,
        encoding=encoding,
        cancel=cancel,
        history=[Turn(turn.question, turn.answer) for turn in params.history],
        stage=progress.stage if progress is not None else None,
        on_spans=partial.snapshot if partial is not None else None,
    )
