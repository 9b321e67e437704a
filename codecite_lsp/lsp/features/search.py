"""``codecite/search``: retrieval only, no model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...service.search import search as search_root
from ..params import SearchParams

if TYPE_CHECKING:
    from . import Host


async def search(host: Host, params: SearchParams) -> dict[str, Any]:
    session = host.session_for(params.uri) if params.uri else host.default_session()
    from ...core.responses import SearchReply  # pydantic: kept off the start-up path

    results = await host.run(search_root, session, params.query, params.limit)
    return SearchReply(results=results).model_dump(mode="json")
