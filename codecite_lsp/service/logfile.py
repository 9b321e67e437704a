"""Each root's errors also go to ``<index_dir>/server.log``, for bug reports. Best effort: a
folder that cannot be written (read-only, full disk) costs the log file, never a request."""

from __future__ import annotations

import logging
from pathlib import Path

from ..index.damage import clear_misplaced

log = logging.getLogger("codecite_lsp")


class _BestEffortHandler(logging.FileHandler):
    def handleError(self, record: logging.LogRecord) -> None:
        """A failed write (disk full) is dropped: the default prints a traceback per record."""


def attach(index_dir: Path) -> logging.Handler | None:
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
        clear_misplaced(index_dir)  # before the log is opened through a link in a checkout
        handler = _BestEffortHandler(index_dir / "server.log", encoding="utf-8")
    except OSError as exc:
        log.warning("no server.log in %s: %s", index_dir, exc)
        return None
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    return handler


def detach(handler: logging.Handler | None) -> None:
    if handler is not None:
        log.removeHandler(handler)
        handler.close()
