"""``codecite/status``: per root, what is indexed, what is pending, what was skipped and why."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...service.status import status as root_status

if TYPE_CHECKING:
    from . import Host


async def status(host: Host) -> dict[str, Any]:
    # On the event loop, deliberately: it only reads counters, and it must answer while
    # every worker is busy (a hover on a huge buffer, an index pass).
    from ...core.responses import StatusReply  # pydantic: kept off the start-up path

    roots = [root_status(session.upkeep) for session in list(host.sessions.values())]
    return StatusReply(roots=roots).model_dump(mode="json")
