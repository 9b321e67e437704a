"""The live index behind the MCP tools: the language server's ``Session``, driven for an agent.

The Session already owns the lazy build, and its Upkeep the watcher, the upkeep after edits and
the index notes; the tools' work is the service's own ``ask`` and ``search``: the MCP server must
not grow a second copy of any of them.

Start-up order matters for the first tool call (issue 14: answered within 2 s): ``start`` opens
the index in a background thread while the stdio loop answers ``initialize``; a call that needs
the index waits for it a bounded time and otherwise answers at once with an "indexing" note.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.answers import Answered, Refused
from ..core.responses import SearchResult
from ..service import ask, search
from ..service.session import Session

log = logging.getLogger("codecite_lsp")
CLOSE_WAIT_SECONDS = 2.0


@dataclass(frozen=True)
class Progress:
    done: int = 0
    total: int = 0
    message: str = "opening the index"


class Workspace:
    """One repository: its Session, the background index pass and how far it has got."""

    def __init__(self, root: Path, settings: Mapping[str, Any] | None = None) -> None:
        self.root = root
        self.session = Session(root, settings or {})
        self.config = self.session.config
        self.progress = Progress()
        self.summary: str | None = None  # the finished pass's summary line
        self.failure: str | None = None  # why the index could not be opened
        self.pass_failure: str | None = None  # why the index may lag behind the files
        self._searchable = threading.Event()  # the retriever is open (an old index serves)
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None

    # -- background work ---------------------------------------------------------------------

    def start(self) -> None:
        """Open the index, watch the files and bring the index up to date, all off the loop."""
        self._thread = threading.Thread(target=self._run, name="codecite-index", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            # The retriever first: an index left by an earlier run answers while this pass
            # re-hashes the files; a repository never indexed answers "indexing".
            self.session.retriever  # noqa: B018 (built on first access)
        except Exception as exc:  # search and ask say so; verify/open_citation still work
            log.exception("opening the index failed")
            self.failure = f"the index could not be opened: {exc}"
            return
        finally:
            self._searchable.set()
        try:  # before the pass, so edits made while it runs are caught too
            self.session.upkeep.watch()
        except Exception:  # no live updates, but the pass and every tool still work
            log.exception("file watcher failed")
        try:
            self.summary = self.session.upkeep.index(self._on_progress, self._cancel)
            log.info("index pass: %s", self.summary)
        except Exception as exc:  # e.g. another process kept the index locked too long
            log.exception("indexing failed")
            self.summary = ""
            self.pass_failure = f"the index may be out of date: the index pass failed ({exc})"

    def _on_progress(self, done: int, total: int, message: str) -> None:
        self.progress = Progress(done, total, message)

    def wait_searchable(self, seconds: float) -> bool:
        return self._searchable.wait(seconds)

    # -- state for the tools -----------------------------------------------------------------

    def note(self) -> str | None:
        """Why results may be incomplete right now, in words an agent can act on."""
        if self.failure:
            return self.failure
        if not self._searchable.is_set():
            return "the index is still opening: call again in a few seconds"
        if self.summary is None:  # the first pass has not finished
            done, total = self.progress.done, self.progress.total
            counted = f" ({done}/{total}: {self.progress.message})" if total else ""
            return f"indexing is still running{counted}: results may be incomplete"
        return self.pass_failure or self.session.upkeep.note()

    # -- the tools' work (blocking: run in worker threads) ------------------------------------

    def search(self, query: str, limit: int, cancel: threading.Event) -> list[SearchResult]:
        return search.search(self.session, query, limit, cancel=cancel)

    def ask(self, question: str, cancel: threading.Event) -> Answered | Refused:
        return ask.ask(self.session, question, None, None, None, cancel=cancel)

    def close(self) -> None:
        """Stop the pass (it checks between steps, so a batch being written finishes) and the
        watcher. A pass still opening the index cannot be interrupted: not waited for long."""
        self._cancel.set()
        if self._thread is not None:
            self._thread.join(timeout=CLOSE_WAIT_SECONDS)
        self.session.close()
