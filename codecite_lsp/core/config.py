"""Configuration, merged from (lowest to highest precedence): defaults, ``[tool.codecite]`` in the
repository's pyproject.toml, ``.codecite.toml``, ``CODECITE_<KEY>`` environment variables, and
explicit overrides (CLI flags, LSP initializationOptions / didChangeConfiguration).

The repository's files are written by whoever wrote the repository: the settings that decide
where code and keys go (``ROUTING_KEYS``, and ``embedding`` naming a remote model) are taken from
them only when the user trusts the repository (``CODECITE_TRUST_REPO_CONFIG=1``, or ``trusted`` /
``trust_repository_settings`` in the user's own settings, which editors fill from their workspace
trust; ``Config.repository_trusted`` carries it, and no file can set it). The same trust lets
a ``.codeciteignore`` re-include files git ignores (ingest/ignore.py). An ``index_dir`` from
the repository must stay inside it, trusted or not. What is ignored is reported in plain words,
like an invalid value.

Every key is documented once, in its field here; README.md's table is generated from it
(``python -m codecite_lsp.core.config --markdown``).

Without ``index_dir`` the index is kept in ``<repo>/.codecite``, unless the repository cannot be
written (a checkout owned by another user, a read-only mount) or ``.codecite`` there is a file:
then in the user's cache folder,
``$XDG_CACHE_HOME/codecite/<name>-<hash of the resolved root>`` (``~/.cache`` by default). An
index already in ``<repo>/.codecite`` is used even when it cannot be written, to be read.
"""

from __future__ import annotations

import dataclasses
import hashlib
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

from .files import read_regular


class ConfigError(ValueError):
    """A configuration value is invalid; ``problems`` lists each one in plain words."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _setting(default: Any, doc: str) -> Any:
    """A Config field with its one-line documentation (README's table is generated from it)."""
    return dataclasses.field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class Config:
    model: str = _setting(
        "extractive",
        "a litellm model string (`openai/gpt-4o-mini`, `anthropic/claude-…`, `ollama/llama3`, …),"
        " or `extractive` (no model: answers quote the best lines)",
    )
    api_key_env: str | None = _setting(
        None,
        "name of the environment variable holding the model's API key, when it is not the"
        " provider's standard one (`OPENAI_API_KEY`, …); the key itself never goes into settings"
        " or LSP messages",
    )
    embedding: str = _setting(
        "default",
        "`default` (an offline embedder trained on the repository), `minilm` (all-MiniLM-L6-v2"
        " vectors for every chunk in the first fusion, offline), `none` (keyword only), or a"
        " litellm embedding model (`openai/text-embedding-3-small`, …)",
    )
    meaning: str = _setting(
        "none",
        "`minilm`: search's semantic leg, all-MiniLM-L6-v2 vectors of every chunk (offline),"
        " embedded behind the keyword index, code first, voting after the ranking rules (not"
        " the default: it won on neither language fold, docs/benchmarks.md); `none`: no"
        " semantic leg",
    )
    rerank: str = _setting(
        "none",
        "`minilm`: questions rerank their best 20 candidates by meaning,"
        " offline; `none`: word evidence only. Never used by `search` or hover",
    )
    index_dir: str | None = _setting(
        None,
        "where the index lives (none: `<repo>/.codecite`, or the user's cache folder when the"
        " repository cannot be written or `.codecite` there is a file); relative paths are under"
        " the repository",
    )
    base: str | None = _setting(
        None,
        "a shared base index published by `codecite index --publish URI` (`s3://bucket/prefix`,"
        " `gs://…`, `az://…`, or a local folder): the newest base whose commit is an ancestor of"
        " HEAD is read, and only files that differ from it are indexed locally. Credentials come"
        " from the standard environment (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT`, …) or profile,"
        " never from settings",
    )
    chunk_budget: int = _setting(
        1800, "characters per chunk before a definition is split at its children"
    )
    max_file_bytes: int = _setting(1_048_576, "larger files are skipped (reported)")
    max_line_length: int = _setting(
        1000,
        "lines longer than this count as long: a file mostly of long lines, or whose long lines"
        " read as minified code, is skipped as minified or generated (so is a file marked"
        " generated); one long line in a hand-written file does not skip it",
    )
    hover: bool = _setting(True, "explain the symbol under the cursor on hover")
    hover_timeout: float = _setting(
        8.0,
        "seconds a hover waits for the model; then it shows the offline explanation",
    )
    model_timeout: float = _setting(60.0, "seconds per model call")
    model_retries: int = _setting(
        2, "retries of a model call on transient errors (rate limit, 5xx, connection); 0: none"
    )
    support_check: str = _setting(
        "model",
        "`model` (the default; it applies only with a model configured, never to `extractive`):"
        " one more call per answer (not hover), batching every claim that passed the citation"
        " checks, asks the model whether the quoted lines entail each; claims it judges"
        " unsupported are removed, and a failed or unreadable check refuses the answer (no claim"
        " is shown unchecked); a claim's wording (negations, quantifiers, counts in words) is then"
        " its to judge. `off`: the deterministic checks alone, word rules included",
    )
    tool_loop: str = _setting(
        "auto",
        "with a model configured, let it call `search`, `read`, `definition` and `callers` over"
        " the index (the same privacy rules) before it answers; each result is a source the"
        " answer may cite. `auto`: through tool calling where litellm says the model has it, else"
        ' written in the model\'s reply (`{"more": ...}`); `on`: tool calling always (a model'
        " litellm does not know); `off`: one retrieval, one answer",
    )
    tool_rounds: int = _setting(4, "rounds of tool calls at most before the model must answer")
    tool_calls_per_round: int = _setting(
        4, "tool calls the model may make in one round; more are refused as over the budget"
    )
    tool_tokens: int = _setting(
        60000, "tokens (prompt and reply) the tool rounds may spend; then the model must answer"
    )
    tool_seconds: float = _setting(
        30.0, "seconds the tool rounds may take; then the model must answer"
    )
    candidates: int = _setting(30, "hybrid candidates before reranking")
    context_chunks: int = _setting(8, "chunks shown to the model at most")
    context_tokens: int = _setting(6000, "token budget of the sources in a prompt")
    relevance_floor: float = _setting(
        0.25,
        "reranked relevance under which a chunk is not evidence; if nothing clears it the"
        " answer is refused without calling the model",
    )
    debounce_ms: int = _setting(200, "the file watcher's debounce, in milliseconds")
    # Whether the repository's own settings may decide what leaves the machine (its routing
    # keys, its .codeciteignore re-including git-ignored files). Set from the user's settings
    # or CODECITE_TRUST_REPO_CONFIG only, never from a repository's files: not a setting.
    repository_trusted: bool = False

    def resolved_index_dir(self, repo: Path) -> Path:
        if self.index_dir:
            path = Path(self.index_dir).expanduser()
            return path if path.is_absolute() else (repo / path)
        local = repo / ".codecite"
        if _taken(local):
            # The repository's own file, not ours to move or delete (git would show it gone):
            # the index goes where an unwritable repository's goes.
            return cached_index_dir(repo) or local
        if os.path.lexists(local) and not local.is_dir():
            return local  # a dangling link, meant to lead somewhere: the CLI says what to run
        if _writable(local) or (local / "meta.json").is_file():
            return local  # a writable index, or one somebody built here to be read
        if local.exists() or not _writable(repo):
            return cached_index_dir(repo) or local
        return local

    def index_dir_note(self, repo: Path) -> str | None:
        """Where the index went when the repository could not hold it, in plain words."""
        where = self.resolved_index_dir(repo)
        local = repo / ".codecite"
        if self.index_dir or where == local:
            return None
        if _taken(local):
            return f"{local} is not a folder (left as it is); the index is kept in {where}"
        return f"{repo} cannot be written; its index is kept in {where}"


def _taken(local: Path) -> bool:
    """Whether the default index folder's name is held by something else: a file, a FIFO, a
    link to a file (a dangling link is not: it may name a folder not mounted yet)."""
    return local.exists() and not local.is_dir()


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


def cached_index_dir(repo: Path) -> Path | None:
    """The user's cache folder for ``repo``'s index; None without a home folder to hold it."""
    resolved = repo.resolve()
    cache = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(cache):  # the XDG spec: a relative path is to be ignored
        try:
            cache = str(Path.home() / ".cache")
        except RuntimeError:  # no HOME and no passwd entry
            return None
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:12]
    return Path(cache) / "codecite" / f"{resolved.name or 'root'}-{digest}"


_FIELDS = {f.name: f for f in dataclasses.fields(Config) if f.name != "repository_trusted"}
# Keys of a repository's files that decide where code or a key is sent.
ROUTING_KEYS = frozenset({"model", "api_key_env"})
_LOCAL_EMBEDDINGS = frozenset({"default", "minilm", "none"})
TRUST_ENV = "CODECITE_TRUST_REPO_CONFIG"
# Keys of the user's own settings saying the repository is trusted (not Config fields).
_TRUST_KEYS = ("trusted", "trust_repository_settings")
_OPTIONAL_STRINGS = {"index_dir", "api_key_env", "base"}
# LanceDB's object stores, by URI scheme (an index_dir is a local folder, never one of them).
STORE_SCHEMES = ("s3://", "s3+ddb://", "gs://", "gcs://", "az://", "abfs://", "memory://")
# Names of settings that would carry a secret: refused with where credentials come from.
_CREDENTIAL_WORDS = re.compile(r"access_key|secret|token|password|credential|sas_key|account_key")
_CREDENTIALS_FROM = (
    "credentials are never read from settings; they come from the standard environment"
    " (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, GOOGLE_APPLICATION_CREDENTIALS,"
    " AZURE_STORAGE_ACCOUNT_KEY, ...) or your cloud profile"
)
_POSITIVE_REALS = {"model_timeout", "hover_timeout", "tool_seconds"}
_FRACTIONS = {"relevance_floor"}
_COUNTS_FROM_ZERO = {"model_retries"}  # no retry is a choice; no chunk or round is not
_CHOICES = {
    "rerank": frozenset({"minilm", "none"}),
    "meaning": frozenset({"minilm", "none"}),
    "support_check": frozenset({"model", "off"}),
    "tool_loop": frozenset({"auto", "on", "off"}),
}
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
        if key == "index_dir" and is_object_store(value):
            raise ValueError(
                f"index_dir must be a local folder, got {value!r}: name a shared index on object"
                " storage with the `base` setting (read) and `codecite index --publish URI`"
                " (write)"
            )
        if key == "base":
            check_base(value)
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
        if number < 0 or (number == 0 and key not in _COUNTS_FROM_ZERO):
            bound = "0 or more" if key in _COUNTS_FROM_ZERO else "positive"
            raise ValueError(f"{key} must be {bound}, got {number}")
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
    if key in _CHOICES and value.strip() not in _CHOICES[key]:
        raise ValueError(f"{key} must be one of {', '.join(sorted(_CHOICES[key]))}, got {value!r}")
    return value.strip()


def is_object_store(value: str) -> bool:
    """Whether ``value`` names an object store (LanceDB's schemes), not a local path."""
    return value.strip().lower().startswith(STORE_SCHEMES)


def check_base(value: str) -> None:
    """A base URI that carries a credential (``s3://KEY:SECRET@bucket``, ``?secret=``) is
    refused: settings files are shared, and keys belong to the environment or profile."""
    if not is_object_store(value):
        return  # a local folder (tests, air-gapped use)
    rest = value.split("://", 1)[1]
    authority = rest.split("/", 1)[0]
    if "@" in authority or "?" in rest:
        raise ValueError(f"base {_redacted(value)} refused: {_CREDENTIALS_FROM}")


def _redacted(uri: str) -> str:
    """The URI without what may be a key (it is shown in messages and logs)."""
    scheme, _, rest = uri.partition("://")
    authority, slash, path = rest.partition("/")
    host = authority.rsplit("@", 1)[-1]
    return f"{scheme}://{host}{slash}{path.split('?', 1)[0]}"


def _apply(
    values: dict[str, Any], layer: Mapping[str, Any], source: str, problems: list[str]
) -> None:
    for raw_key, raw_value in layer.items():
        key = raw_key.replace("-", "_")
        if key not in _FIELDS and _CREDENTIAL_WORDS.search(key.lower()):
            problems.append(f"{source}: {raw_key!r} refused: {_CREDENTIALS_FROM}")
            continue
        if key not in _FIELDS:
            problems.append(f"{source}: unknown setting {raw_key!r}")
            continue
        try:
            values[key] = _coerce(key, raw_value)
        except ValueError as exc:
            problems.append(f"{source}: {exc}")


def _read_toml(path: Path, problems: list[str]) -> dict[str, Any]:
    try:
        return tomllib.loads(read_regular(path)[0].decode("utf-8"))
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


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() in {"1", "true", "yes", "on"})


def _untrusted_keys(layer: Mapping[str, Any]) -> dict[str, str]:
    """Keys of a repository layer that an untrusted repository may not set, and why."""
    refused = {}
    for raw_key, value in layer.items():
        key = raw_key.replace("-", "_")
        if key in ROUTING_KEYS:
            refused[raw_key] = "it decides where your code or key is sent"
        elif key == "embedding" and isinstance(value, str) and value not in _LOCAL_EMBEDDINGS:
            refused[raw_key] = "a remote embedding model is sent your code"
    return refused


def _index_dir_outside(repo: Path, layer: Mapping[str, Any]) -> bool:
    """Whether the layer's index_dir leaves the repository (symlinks followed)."""
    value = layer.get("index_dir", layer.get("index-dir"))
    if not isinstance(value, str) or not value:
        return False
    root = os.path.realpath(repo)
    target = os.path.realpath(os.path.join(root, os.path.expanduser(value)))
    return not target.startswith(root + os.sep)


def _screen(
    repo: Path, layer: Mapping[str, Any], source: str, trusted: bool, problems: list[str]
) -> dict[str, Any]:
    """A repository layer without what it may not decide, each refusal reported."""
    kept = dict(layer)
    refused = {} if trusted else _untrusted_keys(layer)
    for raw_key, why in refused.items():
        del kept[raw_key]
        problems.append(
            f"{source}: {raw_key!r} ignored: {why}, and this repository's settings are not "
            f"trusted (set {TRUST_ENV}=1 or trust the workspace in your editor to use it)"
        )
    if _index_dir_outside(repo, kept):
        kept.pop("index_dir", None)
        kept.pop("index-dir", None)
        problems.append(
            f"{source}: 'index_dir' refused: a repository may only keep its index inside "
            "itself (set index_dir in your own settings to put it elsewhere)"
        )
    return kept


def load_config_lenient(
    repo: Path,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[Config, list[str]]:
    """Merge every layer; invalid values are dropped (their default stays) and reported, as are
    repository settings an untrusted repository may not decide."""
    config, problems, notices = _load(repo, overrides, environ)
    return config, problems + notices


def _load(
    repo: Path, overrides: Mapping[str, Any] | None, environ: Mapping[str, str] | None
) -> tuple[Config, list[str], list[str]]:
    environ = os.environ if environ is None else environ
    user = {k: v for k, v in (overrides or {}).items() if v is not None}
    trusted = _is_true(environ.get(TRUST_ENV, "")) or any(
        _is_true(user.pop(key, False)) for key in _TRUST_KEYS
    )
    problems: list[str] = []
    notices: list[str] = []
    values: dict[str, Any] = {}
    for source, layer in file_layers(repo, problems):
        _apply(values, _screen(repo, layer, source, trusted, notices), source, problems)
    _apply(values, env_layer(environ), "environment", problems)
    _apply(values, user, "settings", problems)
    return Config(**values, repository_trusted=trusted), problems, notices


def load_config(
    repo: Path,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    notices: list[str] | None = None,
) -> Config:
    """Strict variant for the CLI: any invalid value is an error the user must fix; repository
    settings ignored for want of trust are added to ``notices`` (the CLI prints them)."""
    config, problems, ignored = _load(repo, overrides, environ)
    if problems:
        raise ConfigError(problems)
    if notices is not None:
        notices.extend(ignored)
    return config


def settings_table() -> str:
    """The Markdown table of every setting: key, default, what it does (README's table)."""
    rows = ["| key | default | meaning |", "| --- | --- | --- |"]
    for field in dataclasses.fields(Config):
        if "doc" not in field.metadata:
            continue  # repository_trusted: derived from the user's trust, never set
        default = "none" if field.default is None else f"`{_toml(field.default)}`"
        rows.append(f"| `{field.name}` | {default} | {field.metadata['doc']} |")
    return "\n".join(rows) + "\n"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


if __name__ == "__main__":
    if sys.argv[1:] != ["--markdown"]:
        sys.exit("usage: python -m codecite_lsp.core.config --markdown")
    sys.stdout.write(settings_table())
