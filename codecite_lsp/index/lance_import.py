"""Importing lancedb without the parts of it a local index never runs.

``import lancedb`` pays for three things a local index never uses, a large share of every
``codecite search``'s start (bench/bench_cli.py prints where a search's imports go):

- ``lance_namespace_urllib3_client``, the generated client of Lance's REST namespace: its package
  imports all its API classes (~370 methods decorated with pydantic's ``validate_call``, and
  urllib3) and its models package all ~250 request and response models. While lancedb is
  imported, both packages are lazy (PEP 562): a name they re-export is imported at its first
  access, so only the ~140 models lance_namespace names are made, and no API class at all;
- those models, made with pydantic's ``defer_build``, and any of the package's methods
  decorated meanwhile, validated from their first call: the same validation, built when (if
  ever) it is needed;
- ``overrides.override``, which checks each of lancedb's ~100 overriding methods against its
  base classes' signatures (reading their bytecode) as the class is made: a check for lancedb's
  developers. The methods keep the mark ``EnforceOverrides`` looks for.

Anything else decorated or made meanwhile (another thread's import) is treated as usual, except
that a model is built at its first use (which changes when, not what, it validates) and an
``override`` is not checked. Should a package's ``__init__`` do more than re-export names (another
version), it is imported as usual.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Callable, Iterator
from pathlib import Path
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


def _reexports(init: Path) -> tuple[dict[str, str], dict[str, Any]] | None:
    """For a package ``__init__`` that only re-exports: each name with the module it comes from,
    and its constants (``__version__``, ``__all__``). None if it does anything else."""
    try:
        tree = ast.parse(init.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    sources: dict[str, str] = {}
    constants: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if any(alias.name == "*" for alias in node.names):
                return None
            sources.update({alias.asname or alias.name: node.module for alias in node.names})
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(target := node.targets[0], ast.Name)
        ):
            try:
                constants[target.id] = ast.literal_eval(node.value)
            except ValueError:
                return None
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            return None  # code of its own: import the package as usual
    return sources, constants


def _lazy_package(name: str) -> types.ModuleType | None:
    """The package ``name``, not yet imported, whose re-exported names import their module at
    their first access; None (nothing done) if its ``__init__`` does more than re-export."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None or spec.submodule_search_locations is None:
        return None
    found = _reexports(Path(spec.origin))
    if found is None:
        return None
    sources, constants = found
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(constants)

    def __getattr__(attribute: str) -> Any:  # only for names not yet in the module
        if attribute in sources:
            value = getattr(importlib.import_module(sources[attribute]), attribute)
        elif importlib.util.find_spec(f"{name}.{attribute}") is not None:
            value = importlib.import_module(f"{name}.{attribute}")  # as the real one did
        else:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        setattr(module, attribute, value)
        return value

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    module.__dir__ = lambda: sorted({*module.__dict__, *sources})  # type: ignore[method-assign]
    return module


@contextlib.contextmanager
def _lazy_client() -> Iterator[None]:
    """The REST client's package and its models package made lazy (left so afterwards: they
    stay in ``sys.modules``), unless either is imported already or not lazy-able."""
    made: list[str] = []
    try:
        for name in (_PACKAGE, _PACKAGE + ".models"):
            if name in sys.modules:
                break
            module = _lazy_package(name)
            if module is None:
                break
            sys.modules[name] = module
            made.append(name)
            parent, _, child = name.rpartition(".")
            if parent:
                setattr(sys.modules[parent], child, module)
        yield
    except BaseException:
        for name in made:  # as if nothing had been tried
            sys.modules.pop(name, None)
        raise


def _marked(method: Any = None, /, **_: Any) -> Any:
    """``overrides.override`` without its check: the mark only."""
    if method is None:
        return _marked
    method.__override__ = True
    return method


@contextlib.contextmanager
def _overrides_unchecked() -> Iterator[None]:
    try:
        import overrides
    except ImportError:  # lancedb does without it
        yield
        return
    real = overrides.override, overrides.overrides
    overrides.override = overrides.overrides = _marked
    try:
        yield
    finally:
        overrides.override, overrides.overrides = real


_IMPORTING = threading.Lock()  # two threads patching pydantic at once could leave it patched


def import_lancedb() -> Any:
    """The lancedb module, imported (the first time) without what a local index never runs.
    Thread-safe: an index opened in one thread while another opens one waits for its import."""
    with _IMPORTING, contextlib.ExitStack() as first_import:
        if "lancedb" not in sys.modules:
            for lighter in (_validators_deferred, _overrides_unchecked, _lazy_client):
                first_import.enter_context(lighter())
        import lancedb

    return lancedb
