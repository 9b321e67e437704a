"""Command line: ``codecite index|search|ask|eval|stats|serve|mcp`` (shapes in docs/contracts.md),
one module per command and ``run`` wiring them (the console scripts' ``main``, ``serve_main``).

Heavy modules (lancedb, litellm) are imported inside the commands that need them, so
``codecite --help`` and ``codecite serve``'s initialize stay fast.
"""

from .run import main, serve_main

__all__ = ["main", "serve_main"]
