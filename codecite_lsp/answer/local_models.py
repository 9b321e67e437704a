"""A local Ollama server's models, offered when no model is configured.

Ollama lists its models at ``GET /api/tags`` (``{"models": [{"name": "llama3.2:latest", ...}]}``);
litellm calls them as ``ollama/<name>``. Only a loopback address is ever asked (``OLLAMA_HOST``
is respected when it names one: code never leaves the machine to find a model), with a short
timeout, and the answer is kept for the process: an offline answer waits at most once, and
briefly, for a server that is not there.
"""

from __future__ import annotations

import ipaddress
import json
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_HOST = "127.0.0.1:11434"
TIMEOUT = 0.3  # seconds: a running local server answers in milliseconds
_MAX_BODY = 1 << 20  # a tag list is a few KB; more is not Ollama
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


@dataclass(frozen=True)
class LocalModels:
    """What a local server offers: its address and litellm model strings, best known first."""

    host: str | None  # the base URL asked; None when OLLAMA_HOST names another machine
    models: tuple[str, ...]  # "ollama/<name>", as litellm and the `model` setting take them


def ollama_base(environ: Mapping[str, str] | None = None) -> str | None:
    """The base URL of the local Ollama server (``OLLAMA_HOST`` or the default), or None when
    it is not a loopback address."""
    raw = ((environ if environ is not None else os.environ).get("OLLAMA_HOST") or "").strip()
    raw = raw or DEFAULT_HOST
    parts = urlsplit(raw if "://" in raw else f"http://{raw}")
    try:
        host, port = parts.hostname or "", parts.port or 11434
    except ValueError:  # a port that is not a number
        return None
    if parts.scheme not in ("http", "https") or not _loopback(host):
        return None
    if host in ("0.0.0.0", "::"):  # the server listens everywhere: ask it on loopback
        host = "127.0.0.1"
    shown = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{shown}:{port}"


def _loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def ask_tags(base: str, timeout: float = TIMEOUT) -> tuple[str, ...]:
    """The models the server at ``base`` lists, as litellm names; () when nothing answers
    like Ollama within ``timeout``."""
    # No proxy: a loopback address asked through a proxy would leave the machine.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{base}/api/tags", timeout=timeout) as response:
            body = json.loads(response.read(_MAX_BODY + 1)[:_MAX_BODY] or b"{}")
    except (OSError, ValueError, urllib.error.URLError):
        return ()
    listed = body.get("models") if isinstance(body, dict) else None
    if not isinstance(listed, list):
        return ()
    names = [m.get("name") or m.get("model") for m in listed if isinstance(m, dict)]
    return tuple(f"ollama/{name}" for name in names if isinstance(name, str) and name.strip())


_lock = threading.Lock()
_found: dict[str, tuple[str, ...]] = {}


def local_models() -> LocalModels:
    """The local Ollama server's models, asked once per process and base URL."""
    base = ollama_base()
    if base is None:
        return LocalModels(None, ())
    with _lock:  # concurrent first asks wait for one look-up, not one each
        if base not in _found:
            _found[base] = ask_tags(base)
        return LocalModels(base, _found[base])
