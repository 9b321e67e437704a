"""Work-done progress (``$/progress``): indexing as a cancellable bar with rising percentages,
and each ask as its stages (retrieving, asking the model, verifying, retrying), cancellable;
and an ask's partial results, its verified spans as they arrive, on the client's
``partialResultToken``."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from ..core.answers import ClaimSpan, GapSpan, ProseSpan
    from ..service.session import Session
    from .server import CodeciteServer

log = logging.getLogger("codecite_lsp")


@dataclass
class ProgressSteps:
    """Turns the indexer's (done, total, message) calls into few, never-falling reports.

    The indexer counts files, then chunks to embed: the second phase restarts at 0, but LSP
    percentages must keep rising, so the bar stays where it is and the message says how far.
    """

    shown: int = -1
    sent_at: float = 0.0
    interval: float = 0.2  # seconds between reports that do not move the bar

    def next(self, done: int, total: int, message: str) -> types.WorkDoneProgressReport | None:
        now = time.monotonic()
        if total <= 0:  # e.g. waiting for another indexer's lock: no fraction to show
            return types.WorkDoneProgressReport(message=message)
        percent = min(100, 100 * done // total)
        if percent <= self.shown and now - self.sent_at < self.interval:
            return None
        self.sent_at = now
        if percent < self.shown:
            message = f"{message} ({percent}%)"
        self.shown = max(self.shown, percent)
        return types.WorkDoneProgressReport(message=message, percentage=self.shown)


async def index_with_progress(ls: CodeciteServer, session: Session) -> None:
    """Index one root in the background, reported as cancellable work-done progress."""
    token = f"codecite-index-{uuid.uuid4().hex[:8]}"
    cancel = threading.Event()
    ls.index_runs.add(cancel)
    # from now: status says "indexing" while the watcher starts too
    session.upkeep.indexing = True
    progress = await _begin(ls, token, session.root.name)
    if progress:
        ls.work_done_progress.tokens[token].add_done_callback(lambda _: cancel.set())
    steps = ProgressSteps()

    def on_progress(done: int, total: int, message: str) -> None:
        value = steps.next(done, total, message)
        if progress and value is not None:
            ls.soon(ls.work_done_progress.report, token, value)

    loop = asyncio.get_running_loop()
    try:  # before the pass, so edits made while it runs are caught too
        await loop.run_in_executor(ls.work, session.upkeep.watch)
    except Exception as exc:  # no live updates, but didSave and requests still work
        ls.report("file watcher", exc)
    summary = "cancelled"
    try:
        summary = await loop.run_in_executor(ls.indexing, session.upkeep.index, on_progress, cancel)
    except Exception as exc:
        ls.report("indexing", exc)
        summary = f"failed: {exc}"
    finally:
        session.upkeep.indexing = False
        ls.index_runs.discard(cancel)
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=summary))
            ls.work_done_progress.tokens.pop(token, None)


async def _begin(ls: CodeciteServer, token: str, name: str) -> bool:
    if not await _create(ls, token):  # no progress bar: index all the same
        return False
    ls.work_done_progress.begin(
        token,
        types.WorkDoneProgressBegin(
            title="codecite: indexing", message=name, cancellable=True, percentage=0
        ),
    )
    return True


class AskProgress:
    """One ask as work-done progress: each stage of the answer is a report, and the client's
    cancel button (``window/workDoneProgress/cancel``) stops the work like ``$/cancelRequest``."""

    def __init__(self, ls: CodeciteServer, token: types.ProgressToken) -> None:
        self.ls = ls
        self.token = token

    def stage(self, message: str) -> None:
        """From the worker thread: the step that starts now."""
        report = types.WorkDoneProgressReport(message=message, cancellable=True)
        self.ls.soon(self.ls.work_done_progress.report, self.token, report)

    def on_cancel(self, stop: Callable[[], None]) -> None:
        future = self.ls.work_done_progress.tokens.get(self.token)
        if future is not None:
            future.add_done_callback(lambda _: stop())

    def end(self, message: str) -> None:
        self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        self.ls.work_done_progress.tokens.pop(self.token, None)


class PartialResults:
    """An ask's partial results: each snapshot of verified spans, sent as ``$/progress`` on the
    client's ``partialResultToken`` as ``{"attempt": n, "spans": [...]}`` (docs/contracts.md),
    each span in the final answer's shape."""

    def __init__(self, ls: CodeciteServer, token: str | int) -> None:
        self.ls = ls
        self.token = token

    @classmethod
    def of(cls, ls: CodeciteServer, token: object) -> PartialResults | None:
        """For the ``partialResultToken`` the client sent (a string or an integer), else None."""
        if isinstance(token, bool) or not isinstance(token, (str, int)):
            return None
        return cls(ls, token)

    def snapshot(self, attempt: int, spans: list[ProseSpan | GapSpan | ClaimSpan]) -> None:
        """From the worker thread: sent in order, before the answer (the loop runs both)."""
        from ..core.answers import AnswerSnapshot  # pydantic: off the start-up path

        value: dict[str, Any] = AnswerSnapshot(attempt=attempt, spans=spans).model_dump(mode="json")
        self.ls.soon(self.ls.progress, types.ProgressParams(token=self.token, value=value))


async def ask_progress(ls: CodeciteServer, token: object) -> AskProgress | None:
    """Progress on the client's ``workDoneToken``, else on one the server creates (when the
    client supports that), else none: the answer comes all the same."""
    if isinstance(token, bool) or not isinstance(token, (str, int)):
        token = f"codecite-ask-{uuid.uuid4().hex[:8]}"
        if not await _create(ls, token):
            return None
    begin = types.WorkDoneProgressBegin(
        title="codecite: answering", message="starting", cancellable=True
    )
    ls.work_done_progress.begin(token, begin)
    return AskProgress(ls, token)


async def _create(ls: CodeciteServer, token: str) -> bool:
    window = ls.client_capabilities.window
    if not (window and window.work_done_progress):
        return False
    try:
        await ls.work_done_progress.create_async(token)
    except Exception as exc:  # the client refused: answer without progress
        log.info("progress not available: %s", exc)
        return False
    return True
