"""How a request operation stops early: the request names something the root does not have, or
the client cancelled it (checked between the steps of the work)."""

from __future__ import annotations

import threading


class SessionError(ValueError):
    """The request names something this root does not have (bad path, unknown file)."""


class Cancelled(Exception):
    """The client cancelled the request; raised between steps of the work."""


def check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled()
