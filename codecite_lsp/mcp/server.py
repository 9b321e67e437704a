"""``codecite mcp``: verified code context for coding agents over the Model Context Protocol.

Four read-only tools on stdio (the official SDK's ``MCPServer``): ``search_code`` and ``ask`` use
the live index (the language server's Session: same index, watcher and answers);
``verify_citations`` and ``open_citation`` check quotes against the files as they are now.

Tool descriptions are written for the agent's model: what the tool is for, when to call it and
what comes back. Argument errors come back as tool errors (the SDK validates against the
schema); the blocking work runs in worker threads so one slow call never stalls the others.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from .. import __version__
from ..core.answers import Refused
from ..core.limits import (
    MAX_CITATIONS,
    MAX_QUERY_CHARS,
    MAX_QUESTION_CHARS,
    MAX_RESULTS,
    MAX_TOTAL_QUOTE_CHARS,
)
from . import tools
from .models import (
    CitationIn,
    OpenIn,
    OpenOutput,
    SearchOutput,
    VerifyOutput,
)
from .stdin import relay_stdin
from .workspace import Workspace

T = TypeVar("T")

# How long a call that needs the index waits for it to open before answering with a note:
# with the process start (~1.2 s of CPU, most of it importing the SDK) a first call made at
# once still answers within 2 s; later calls find the index open (it opens in ~2-3 s).
INDEX_WAIT_SECONDS = 0.5
_POLL_SECONDS = 0.05

INSTRUCTIONS = """\
codecite indexes this repository (tree-sitter chunks, keyword + vector search, kept current as \
files change) and checks quotes of code against the files as they are now.
- search_code: find code by meaning or identifier; returns ranked chunks with path and lines.
- ask: a question about the code, answered only with verified quotes (or refused, with the \
closest places).
- verify_citations: before showing the user a quote with a path and line numbers, check it; \
fix anything not 'verified' using the lines returned.
- open_citation: read the current lines of a citation with some context.
Paths are relative to the repository root. Secret and git-ignored files are never returned.\
"""

_READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def build_server(workspace: Workspace) -> MCPServer:
    server = MCPServer(
        "codecite",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )

    @server.tool(annotations=_READ_ONLY)
    async def search_code(
        ctx: Context,
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_QUERY_CHARS,
                description="What to find: words, an identifier, or a description of the code.",
            ),
        ],
        limit: Annotated[
            int, Field(strict=True, ge=1, le=MAX_RESULTS, description="How many results.")
        ] = 10,
    ) -> SearchOutput:
        """Search this repository's code. Returns the best-matching chunks (a function, class or
        section each) with path, line range, symbol and the exact text, best first. Use it to
        find where something is defined or handled before reading files."""
        if not query.strip():
            raise ToolError("query is blank: say what to look for")
        if not await _index_open(workspace, ctx):
            return SearchOutput(results=[], note=workspace.note())
        found = await _in_thread(workspace.search, query, limit)
        return SearchOutput(results=found, note=workspace.note())

    @server.tool(annotations=_READ_ONLY)
    async def ask(
        ctx: Context,
        question: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_QUESTION_CHARS,
                description="A question about this repository's code.",
            ),
        ],
    ) -> dict[str, Any]:
        """Answer a question about this repository with citations that were checked verbatim
        against the code. Returns {"status": "answered", "spans": [...]} where every claim span
        carries citations {path, start_line, end_line, quote}, or {"status": "refused", "reason",
        "detail", "retrieved": [closest places]} when the code does not support an answer."""
        if not question.strip():
            raise ToolError("question is blank")
        if not await _index_open(workspace, ctx):
            refused = Refused(reason="stale_index", detail=workspace.note() or "indexing")
            return refused.model_dump(mode="json")
        answer = await _in_thread(workspace.ask, question)
        return answer.model_dump(mode="json")

    @server.tool(annotations=_READ_ONLY)
    async def verify_citations(
        citations: Annotated[
            list[CitationIn],
            Field(
                min_length=1,
                max_length=MAX_CITATIONS,
                description="The quotes to check, each with its path and cited lines.",
            ),
        ],
    ) -> VerifyOutput:
        """Check quotes of code against the files as they are now (not against any index).
        For each citation: verified (the quote is in the cited lines, whitespace aside, as whole
        words, and says something: a name, 8+ characters or whole lines; the answers' own rule),
        moved (it is at other lines: use start_line/end_line), stale (only a changed version
        exists: nearest has the current text), not_found (nothing like it, or only a fragment
        such as "e": nearest has the most similar lines, reason says why) or refused (outside
        the workspace, secret or ignored). Call it before showing quotes."""
        total = sum(len(citation.quote) for citation in citations)
        if total > MAX_TOTAL_QUOTE_CHARS:
            raise ToolError(
                f"the quotes add up to {total} characters; at most {MAX_TOTAL_QUOTE_CHARS} per "
                "call: split them over several calls"
            )
        return await _in_thread(tools.verify_citations, workspace.root, workspace.config, citations)

    @server.tool(annotations=_READ_ONLY)
    async def open_citation(
        citation: Annotated[
            OpenIn,
            Field(description="path, start_line, end_line and optionally the quote to locate."),
        ],
        context_lines: Annotated[
            int, Field(strict=True, ge=0, le=50, description="Lines shown around the cited ones.")
        ] = 3,
    ) -> OpenOutput:
        """Show the current lines of a citation, numbered, with context around them. With a
        quote, the lines are first re-located (the code may have moved since it was cited) and
        the state says whether the quote still holds."""
        return await _in_thread(
            tools.open_citation, workspace.root, workspace.config, citation, context_lines
        )

    return server


async def _index_open(workspace: Workspace, ctx: Context) -> bool:
    """Wait a little for the index to open, telling the client how it goes; False when it is
    not open yet (the caller answers with the note), a tool error when it cannot open."""
    deadline = time.monotonic() + INDEX_WAIT_SECONDS
    shown = -1.0
    while not workspace.wait_searchable(0):
        if time.monotonic() >= deadline:
            return False
        progress = workspace.progress
        percent = 100.0 * progress.done / progress.total if progress.total else 0.0
        if percent > shown:  # MCP progress values must rise
            shown = percent
            await ctx.report_progress(percent, 100.0, f"codecite: {progress.message}")
        await anyio.sleep(_POLL_SECONDS)
    if workspace.failure:
        raise ToolError(f"{workspace.failure} (verify_citations and open_citation still work)")
    return True


async def _in_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run blocking work off the loop; a cancelled request asks the work to stop."""
    cancel = threading.Event()
    try:
        return await anyio.to_thread.run_sync(
            functools.partial(fn, *args, cancel), abandon_on_cancel=True
        )
    except anyio.get_cancelled_exc_class():
        cancel.set()
        raise
    except tools.ToolRefusal as exc:
        raise ToolError(str(exc)) from None


def serve(workspace: Workspace) -> None:
    """Serve on stdio until the client closes the pipe."""
    relay_stdin()
    build_server(workspace).run("stdio")
