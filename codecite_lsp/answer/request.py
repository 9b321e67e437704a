"""One ``ask`` as it runs: who hears its stages and partial results, and what its trace record
accumulates (calls, tokens, attempts, the loop's and the support check's records), written once
at the end by the pipeline (pipeline.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.answers import Answered, Refused
from .partial import Checks, OnSpans, Shown
from .trace import question_hash


@dataclass
class Request:
    """What one ``ask`` accumulates for its trace record."""

    trace_id: str
    question: str
    model: str
    stage: Callable[[str], None] = lambda _: None  # what the user is waiting for, said as it starts
    on_spans: OnSpans | None = None  # partial results: each attempt's verified spans so far
    checks: Checks | None = None  # partial results' support checks, claim by claim
    shown: Shown | None = None  # the attempt being shown
    lock: threading.Lock = field(default_factory=threading.Lock)  # the counts: checks' threads
    started: float = field(default_factory=time.monotonic)
    retrieved: list[dict[str, Any]] = field(default_factory=list)
    # search's first results for the question not wholly in the prompt, and the rule why
    search_left_out: list[dict[str, Any]] = field(default_factory=list)
    untrusted: list[dict[str, Any]] = field(default_factory=list)  # planted text in the sources
    attempts: list[dict[str, Any]] = field(default_factory=list)
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_latency_ms: float = 0.0
    statements_removed: int = 0
    attempts_made: int = 0  # model answers asked for: the second is the stricter retry
    support_check: dict[str, Any] | None = None  # the second pass's record, when it ran
    tool_loop: dict[str, Any] | None = None  # the tool loop's rounds and calls, when it ran

    def record(self, answer: Answered | Refused) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "time": time.time(),
            "question_hash": question_hash(self.question),
            "question_chars": len(self.question),
            "model": self.model,
            "retrieved": self.retrieved,
            "search_left_out": self.search_left_out,
            "untrusted_sources": self.untrusted,
            "attempts": self.attempts,
            "retries": max(0, len(self.attempts) - 1),
            "statements_removed": self.statements_removed,
            "support_check": self.support_check,
            "tool_loop": self.tool_loop,
            "model_calls": self.model_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "model_latency_ms": round(self.model_latency_ms, 1),
            "latency_ms": round((time.monotonic() - self.started) * 1000.0, 1),
            "status": answer.status,
            "reason": answer.reason if isinstance(answer, Refused) else None,
        }
