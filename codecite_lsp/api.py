"""Stable Python API for people who embed the citation gate in their own pipeline (pure).

``gate(raw_model_output, sources)`` returns an Answer dict (docs/contracts.md "Python API") and
never raises: bad model output and bad ``sources`` arguments both come back as a refusal saying
why.
"""

from __future__ import annotations

from typing import Any

from .core.answers import Answered, Refused, RetrievedRef
from .core.records import Source, outside_source
from .verify.gate import GateFailed, GatePassed, GateRefusedByModel, GateResult, verify
from .verify.quotes import fits_lines

_REQUIRED: dict[str, type] = {
    "label": str,
    "path": str,
    "start_line": int,
    "end_line": int,
    "text": str,
}
_OPTIONAL: dict[str, type] = {
    "symbol": str,
    "content_hash": str,
    "revision": str,
    "start_byte": int,
}


def _is(value: Any, kind: type) -> bool:
    # bool is an int in Python; a line number of True is a caller bug, not line 1.
    return isinstance(value, kind) and not (kind is int and isinstance(value, bool))


def _source_problem(index: int, item: Any, seen: set[str]) -> str | None:
    where = f"sources[{index}]"
    if not isinstance(item, dict):
        return f"{where} is a {type(item).__name__}, not an object"
    for key, kind in _REQUIRED.items():
        if key not in item:
            return f"{where} has no {key!r}"
        if not _is(item[key], kind):
            return f"{where}.{key} must be {kind.__name__}, got {item[key]!r}"
    for key, kind in _OPTIONAL.items():
        if item.get(key) is not None and not _is(item[key], kind):
            return f"{where}.{key} must be {kind.__name__}, got {item[key]!r}"
    if item["label"] in seen:
        return f"{where}.label {item['label']!r} is used twice"
    start, end = item["start_line"], item["end_line"]
    if start < 1 or end < start:
        return f"{where} has an invalid line range {start}-{end}"
    if not fits_lines(item["text"], end - start + 1):
        count = item["text"].count("\n") + 1
        return f"{where}.text has {count} lines but lines {start}-{end} are {end - start + 1}"
    return None


def _sources(items: Any) -> list[Source] | str:
    """Sources from the caller's dicts, or a plain-words reason why the argument is unusable."""
    if not isinstance(items, list):
        return f"sources must be a list of objects, got {type(items).__name__}"
    seen: set[str] = set()
    sources = []
    for index, item in enumerate(items):
        problem = _source_problem(index, item, seen)
        if problem:
            return problem
        seen.add(item["label"])
        sources.append(
            outside_source(
                label=item["label"],
                path=item["path"],
                start_line=item["start_line"],
                end_line=item["end_line"],
                text=item["text"],
                symbol=item.get("symbol"),
                content_hash=item.get("content_hash") or "",
                revision=item.get("revision") or "",
                start_byte=item.get("start_byte") or 0,
            )
        )
    return sources


def _retrieved(items: Any) -> list[RetrievedRef]:
    refs = []
    for item in items if isinstance(items, list) else []:
        try:
            score = item.get("score", 0.0)
            refs.append(
                RetrievedRef(
                    path=item["path"],
                    start_line=item["start_line"],
                    end_line=item["end_line"],
                    score=score if isinstance(score, (int, float)) else 0.0,
                )
            )
        except (AttributeError, KeyError, TypeError, ValueError):
            continue  # an unusable entry is already named in the refusal detail
    return refs


def to_answer(result: GateResult, retrieved: list[RetrievedRef]) -> Answered | Refused:
    """The Answer a gate outcome stands for (shared with the answering pipeline)."""
    if isinstance(result, GatePassed):
        return Answered(spans=result.spans)
    if isinstance(result, GateRefusedByModel):
        return Refused(
            reason="no_span_in_retrieval",
            detail="the retrieved sources do not hold the answer",
            retrieved=retrieved,
        )
    assert isinstance(result, GateFailed)
    return Refused(reason=result.kind, detail=result.detail, retrieved=retrieved)


def gate(raw_model_output: str, sources: list[dict[str, Any]]) -> dict[str, Any]:
    """Answered only if every claim's every citation verifies; otherwise a refusal saying why."""
    retrieved = _retrieved(sources)
    parsed = _sources(sources)
    if isinstance(parsed, str):
        detail = f"bad sources: {parsed}"
        return Refused(reason="model_error", detail=detail, retrieved=retrieved).model_dump()
    if not isinstance(raw_model_output, (str, dict)):
        detail = f"the model output is a {type(raw_model_output).__name__}, not text"
        return Refused(reason="model_error", detail=detail, retrieved=retrieved).model_dump()
    return to_answer(verify(raw_model_output, parsed), retrieved).model_dump()
