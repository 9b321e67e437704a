"""Configuration, merged from (lowest to highest precedence): defaults, ``[tool.codecite]`` in the
repository's pyproject.toml, ``.codecite.toml``, ``CODECITE_<KEY>`` environment variables, and
explicit overrides (CLI flags, LSP initializationOptions / didChangeConfiguration).

Every key is documented once, in README.md ("Configuration").
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


class ConfigError(ValueError):
    """A configuration value is invalid; ``problems`` lists each one in plain words."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Config:
    model: str = "extractive"
    # Name of the environment variable holding the model's API key, for keys not kept under the
    # provider's standard name; the key itself never appears in settings or LSP messages.
    api_key_env: str | None = None
    embedding: str = "default"
    index_dir: str | None = None  # None: <repo>/.codecite
    chunk_budget: int = 1800  # characters per chunk before a definition is split
    max_file_bytes: int = 1_048_576
    max_line_length: int = 1000  # longer lines mark a file as minified/generated
    hover: bool = True
    # Seconds a hover waits for the model before it shows the offline explanation instead.
    hover_timeout: float = 8.0
    model_timeout: float = 60.0  # seconds per model call
    model_retries: int = 2  # transient-error retries per model call
    candidates: int = 30  # hybrid candidates before reranking
    context_chunks: int = 8  # chunks shown to the model at most
    context_tokens: int = 6000  # token budget of the sources in a prompt
    relevance_floor: float = 0.25  # rerank score under which a chunk is not evidence
    debounce_ms: int = 200  # watcher debounce

    def resolved_index_dir(self, repo: Path) -> Path:
        if self.index_dir:
            path = Path(self.index_dir).expanduser()
            return path if path.is_absolute() else (repo / path)
        return repo / ".codecite"


_FIELDS = {f.name: f for f in dataclasses.fields(Config)}
_OPTIONAL_STRINGS = {"index_dir", "api_key_env"}
_POSITIVE_REALS = {"model_timeout", "hover_timeout"}
_FRACTIONS = {"relevance_floor"}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _coerce(key: str, value: Any) -> Any:
    """Convert one raw value (TOML, JSON or env string) to the field's type, or raise ValueError."""
    default = _FIELDS[key].default
    if key in _OPTIONAL_STRINGS:
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise ValueError(f"{key} must be a string, got {value!r}")
        if key == "api_key_env" and not _ENV_NAME.fullmatch(value):
            raise ValueError(f"{key} must be an environment variable name, got {value!r}")
        return value
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in {"1", "true", "yes", "on"}:
            return True
        if isinstance(value, str) and value.lower() in {"0", "false", "no", "off"}:
            return False
        raise ValueError(f"{key} must be true or false, got {value!r}")
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError(f"{key} must be a whole number, got {value!r}")
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f"{key} must be a whole number, got {value!r}") from None
        if number <= 0:
            raise ValueError(f"{key} must be positive, got {number}")
        return number
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(f"{key} must be a number, got {value!r}")
        try:
            real = float(value)
        except ValueError:
            raise ValueError(f"{key} must be a number, got {value!r}") from None
        # nan/inf would silently disable the model deadline; a zero timeout fails every call.
        if not math.isfinite(real) or real < 0 or (key in _POSITIVE_REALS and real == 0):
            bound = "positive" if key in _POSITIVE_REALS else "a finite number, not negative"
            raise ValueError(f"{key} must be {bound}, got {value!r}")
        if key in _FRACTIONS and real > 1:  # a score in [0, 1]: above 1 refuses every question
            raise ValueError(f"{key} must be between 0 and 1, got {real}")
        return real
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key} must be a non-empty string, got {value!r}")
    return value.strip()


def _apply(
    values: dict[str, Any], layer: Mapping[str, Any], source: str, problems: list[str]
) -> None:
    for raw_key, raw_value in layer.items():
        key = raw_key.replace("-", "_")
        if key not in _FIELDS:
            problems.append(f"{source}: unknown setting {raw_key!r}")
            continue
        try:
            values[key] = _coerce(key, raw_value)
        except ValueError as exc:
            problems.append(f"{source}: {exc}")


def _read_toml(path: Path, problems: list[str]) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        problems.append(f"{path.name}: cannot be read ({exc})")
        return {}


def file_layers(repo: Path, problems: list[str]) -> list[tuple[str, Mapping[str, Any]]]:
    pyproject = _read_toml(repo / "pyproject.toml", problems)
    tool = pyproject.get("tool", {})
    layers: list[tuple[str, Mapping[str, Any]]] = []
    section = tool.get("codecite") if isinstance(tool, dict) else None
    if isinstance(section, dict):
        layers.append(("pyproject.toml [tool.codecite]", section))
    dotfile = _read_toml(repo / ".codecite.toml", problems)
    if dotfile:
        layers.append((".codecite.toml", dotfile))
    return layers


def env_layer(environ: Mapping[str, str]) -> dict[str, str]:
    return {
        key: environ[f"CODECITE_{key.upper()}"]
        for key in _FIELDS
        if f"CODECITE_{key.upper()}" in environ
    }


def load_config_lenient(
    repo: Path,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[Config, list[str]]:
    """Merge every layer; invalid values are dropped (their default stays) and reported."""
    problems: list[str] = []
    values: dict[str, Any] = {}
    for source, layer in file_layers(repo, problems):
        _apply(values, layer, source, problems)
    _apply(values, env_layer(os.environ if environ is None else environ), "environment", problems)
    if overrides:
        _apply(values, {k: v for k, v in overrides.items() if v is not None}, "settings", problems)
    return Config(**values), problems


def load_config(
    repo: Path,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """Strict variant for the CLI: any invalid value is an error the user must fix."""
    config, problems = load_config_lenient(repo, overrides, environ)
    if problems:
        raise ConfigError(problems)
    return config
