"""The models of a local Ollama server, so an editor can offer to configure one (no root needed;
at most a short timeout, once per process)."""

from __future__ import annotations

from ..answer.local_models import local_models as found_local_models
from ..core.responses import LocalModelsReply


def local_models() -> LocalModelsReply:
    found = found_local_models()
    return LocalModelsReply(host=found.host, models=list(found.models))
