"""How a request operation stops early: the request names something the root does not have, or
the client cancelled it (checked between the steps of the work); and which failures only the
user can fix."""

from __future__ import annotations

import threading


class SessionError(ValueError):
    """The request names something this root does not have (bad path, unknown file)."""


class Cancelled(Exception):
    """The client cancelled the request; raised between steps of the work."""


def check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled()


def user_must_fix(exc: BaseException) -> bool:
    """Whether only the user can fix ``exc`` (a full disk, a Python that cannot start a worker):
    a door shows it, not only logs it."""
    from ..index.tables import IndexUnwritable  # here: 0.25 s of imports at start
    from ..ingest.workers import WorkerUnavailable

    return isinstance(exc, (IndexUnwritable, WorkerUnavailable))
