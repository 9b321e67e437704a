"""Environment defaults for the libraries codecite drives, set in one place.

Entry points (the CLI, the server, the public API's Store) call :func:`apply_defaults` before
importing lancedb or litellm; a value the user set already is kept.
"""

from __future__ import annotations

import os

from .memory import cap_arenas


def apply_defaults() -> None:
    # lancedb's deprecation chatter on stderr floods editors' logs.
    os.environ.setdefault("RUST_LOG", "error")
    # litellm downloads a price table at import without this (no network in many setups).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # Lance builds a full-text index with one worker per "compute" core, and by default keeps
    # two cores for I/O: on a 2-core machine that is one worker, and the index build runs
    # serially at the end of a cold index. With every core counted (and a memory limit at which
    # each worker writes its own partition) both cores build it, ~30% faster, same scores.
    os.environ.setdefault("LANCE_CPU_THREADS", str(os.cpu_count() or 1))
    cap_arenas()
