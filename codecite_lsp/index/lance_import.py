"""Importing lancedb without building the validators of a REST client a local index never calls.

``import lancedb`` imports ``lance_namespace_urllib3_client`` (the generated client of Lance's REST
namespace), whose API classes decorate ~370 methods with pydantic's ``validate_call`` and whose
~250 request and response models each build a validator and a serializer as the class is made: a
large share of the whole import (bench/bench_cli.py prints where a search's imports go), paid by
every ``codecite search``. While that one package is imported, its methods get their validator at
their first call instead, and its models are made with pydantic's ``defer_build``: the same
validation, built when (if ever) it is needed. Anything else decorated meanwhile (another thread's
import) is decorated at once, as usual; a model another thread makes meanwhile is built at its
first use, which changes when, not what, it validates.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

_PACKAGE = "lance_namespace_urllib3_client"


def _deferring(real: Callable[..., Any]) -> Callable[..., Any]:
    """A ``validate_call`` that builds the package's validators at their first call."""

    def validate_call(func: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
            if not getattr(function, "__module__", "").startswith(_PACKAGE + "."):
                return real(function, **options)
            built: Callable[..., Any] | None = None

            @functools.wraps(function)
            def call(*args: Any, **kwargs: Any) -> Any:
                nonlocal built
                if built is None:
                    built = real(function, **options)
                return built(*args, **kwargs)

            return call

        return decorate if func is None else decorate(func)

    return validate_call


@contextlib.contextmanager
def _validators_deferred() -> Iterator[None]:
    import pydantic

    real = pydantic.validate_call
    config = pydantic.BaseModel.model_config  # what every model inherits unless it says otherwise
    pydantic.validate_call = _deferring(real)
    pydantic.BaseModel.model_config = {**config, "defer_build": True}
    try:
        yield
    finally:
        pydantic.validate_call = real
        pydantic.BaseModel.model_config = config


_IMPORTING = threading.Lock()  # two threads patching pydantic at once could leave it patched


def import_lancedb() -> Any:
    """The lancedb module, imported (the first time) without the REST client's validators.
    Thread-safe: an index opened in one thread while another opens one waits for its import."""
    with _IMPORTING:
        if "lancedb" not in sys.modules:
            with contextlib.suppress(ImportError), _validators_deferred():
                # A lancedb without this package: nothing to defer, the import below tells.
                __import__(_PACKAGE)
        import lancedb

    return lancedb
