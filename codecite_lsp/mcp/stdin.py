"""The MCP server's stdin, relayed line by line with every lone surrogate made U+FFFD
(:mod:`codecite_lsp.core.surrogates`): the SDK's parser refuses a line holding one, and a request
it cannot parse is never answered.

The relay sits under the SDK's transport, as fd 0 (a pipe), so the SDK still claims stdin as it
does (fd 0 pointed at the null device for children while it serves).
"""

from __future__ import annotations

import os
import threading

from ..core.surrogates import without_lone_surrogates


def relay_stdin() -> None:
    """Put a pipe at fd 0 and copy the real stdin into it, line by line."""
    source = os.fdopen(os.dup(0), "rb")
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)
    sink = os.fdopen(write_end, "wb")

    def copy() -> None:
        with source, sink:
            for line in source:
                sink.write(without_lone_surrogates(line))
                sink.flush()

    threading.Thread(target=copy, name="codecite-mcp-stdin", daemon=True).start()
