"""Indexing as work-done progress (``$/progress``): a cancellable bar with rising percentages."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
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
        await loop.run_in_executor(ls.work, session.watch)
    except Exception as exc:  # no live updates, but didSave and requests still work
        ls.report("file watcher", exc)
    summary = "cancelled"
    try:
        summary = await loop.run_in_executor(ls.indexing, session.index, on_progress, cancel)
    except Exception as exc:
        ls.report("indexing", exc)
        summary = f"failed: {exc}"
    finally:
        ls.index_runs.discard(cancel)
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=summary))
            ls.work_done_progress.tokens.pop(token, None)


async def _begin(ls: CodeciteServer, token: str, name: str) -> bool:
    window = ls.client_capabilities.window
    if not (window and window.work_done_progress):
        return False
    try:
        await ls.work_done_progress.create_async(token)
    except Exception as exc:  # the client refused: index without a progress bar
        log.info("progress not available: %s", exc)
        return False
    ls.work_done_progress.begin(
        token,
        types.WorkDoneProgressBegin(
            title="codecite: indexing", message=name, cancellable=True, percentage=0
        ),
    )
    return True
