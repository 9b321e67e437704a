"""Request trace: one JSON line per answered or refused question, summarised by ``codecite stats``.

A record holds what is needed to see why an answer was given or refused (retrieved chunk hashes
and scores, search's first three results for the question that the prompt left out and the rule
that left each out, the gate's verdict per citation, the path each reply took: asked as a JSON
schema, a tool call or by the prompt, found as the whole text, in a fence or cut out of prose;
statements removed, retries, tokens, latency; the sources holding text addressed to an AI model;
the optional second pass's verdicts, or why it failed open) but never the question text nor source
code: only the question's sha256.

The JSON-lines helpers here are shared with history.py: one ``os.write`` per record on an
O_APPEND descriptor (concurrent writers never interleave inside a line), and readers skip a
truncated last line left by a crash.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core.records import Source
from ..ingest.injection import kinds, source_findings

TRACE_FILE = "trace.jsonl"

log = logging.getLogger(__name__)


def untrusted_sources(sources: list[Source]) -> list[dict[str, Any]]:
    """The prompt's sources holding text addressed to an AI reader: label, chunk hash, kinds and
    file lines of the findings (never the text)."""
    record = []
    for source in sources:
        found = source_findings(source)
        if found:
            record.append(
                {
                    "label": source.label,
                    "content_hash": source.result.chunk.content_hash,
                    "kinds": kinds(found),
                    "lines": sorted({f.line for f in found}),
                }
            )
    return record


def question_hash(question: str) -> str:
    return hashlib.sha256(question.encode("utf-8")).hexdigest()


_UNWRITABLE: set[Path] = set()  # logs already said to be unwritable (said once each)


def append_line(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line; a previous crash's partial line is closed off first.

    Best effort: a read-only or full disk loses the line (said once per file), never the
    request that wrote it.
    """
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = "\n" + line
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
    except OSError as exc:
        if path not in _UNWRITABLE:
            _UNWRITABLE.add(path)
            log.warning("cannot write %s (%s); answers go on without it", path, exc.strerror)


def read_lines(path: Path) -> Iterator[dict[str, Any]]:
    """Every well-formed record, oldest first; broken lines (a crash mid-write) are skipped."""
    try:
        handle = path.open("r", encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return
    with handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                yield record


class TraceLog:
    def __init__(self, index_dir: Path) -> None:
        self.path = Path(index_dir) / TRACE_FILE

    def write(self, record: dict[str, Any]) -> None:
        append_line(self.path, record)

    def records(self) -> list[dict[str, Any]]:
        return list(read_lines(self.path))


def summarise(index_dir: Path) -> dict[str, Any]:
    """Totals over the whole trace: outcomes, refusal reasons, citation checks, model use, the
    tool loop's rounds, calls per tool and why each loop stopped."""
    answered = 0
    refused: Counter[str] = Counter()
    checked = unknown = failed = retries = model_calls = removed = untrusted = 0
    judged_unsupported = failed_closed = 0  # the optional second pass (support_check.py)
    tokens = 0
    paths: Counter[str] = Counter()  # how replies were asked for and found (reply path)
    looped = rounds = 0  # the tool loop (tool_loop.py): requests it ran for, their rounds
    tool_calls: Counter[str] = Counter()
    stopped: Counter[str] = Counter()
    latencies: list[float] = []
    left_out: Counter[str] = Counter()  # search's first results kept from the prompt, by rule
    records = TraceLog(index_dir).records()
    for record in records:
        if record.get("status") == "answered":
            answered += 1
        elif record.get("status") == "refused":
            refused[str(record.get("reason"))] += 1
        left_out.update(str(left.get("rule")) for left in record.get("search_left_out", []))
        removed += int(record.get("statements_removed", 0))
        untrusted += len(record.get("untrusted_sources", []))
        second = record.get("support_check") or {}
        judged_unsupported += len(second.get("unsupported", []))
        failed_closed += second.get("status") == "failed_closed"
        loop = record.get("tool_loop") or {}
        if loop:
            looped += 1
            rounds += int(loop.get("rounds", 0))
            stopped[str(loop.get("stopped"))] += 1
            tool_calls.update(str(call.get("tool")) for call in loop.get("calls", []))
        for attempt in record.get("attempts", []):
            if attempt.get("mode"):
                paths[f"{attempt['mode']}/{attempt.get('envelope') or 'none'}"] += 1
            for check in attempt.get("checks", []):
                checked += 1
                unknown += not check.get("known_label", True)
                failed += not check.get("ok", False)
        retries += int(record.get("retries", 0))
        model_calls += int(record.get("model_calls", 0))
        tokens += int(record.get("prompt_tokens", 0)) + int(record.get("completion_tokens", 0))
        if record.get("model_latency_ms"):
            latencies.append(float(record["model_latency_ms"]))
    return {
        "requests": len(records),
        "answered": answered,
        "refused": sum(refused.values()),
        "refused_by_reason": dict(sorted(refused.items())),
        "citations_checked": checked,
        "citations_failed": failed,
        "unknown_label_citations": unknown,
        "unknown_label_rate": round(unknown / checked, 4) if checked else 0.0,
        "search_top_left_out_by_rule": dict(sorted(left_out.items())),
        "statements_removed": removed,
        "untrusted_sources": untrusted,
        "claims_judged_unsupported": judged_unsupported,
        "support_checks_failed_closed": failed_closed,
        "reply_paths": dict(sorted(paths.items())),
        "tool_loops": looped,
        "tool_loop_rounds": rounds,
        "tool_calls_by_tool": dict(sorted(tool_calls.items())),
        "tool_loops_stopped_by": dict(sorted(stopped.items())),
        "retries": retries,
        "model_calls": model_calls,
        "tokens": tokens,
        "mean_model_latency_ms": round(sum(latencies) / len(latencies), 1) if latencies else 0.0,
    }
