"""Citation gate benchmark: generated answers, honest and corrupted, against real source files.

    python bench/bench_gate.py [--cases 12000] [--seed 7]

Each case is a model reply over 4-8 sources cut from this repository's own code and the fixture
repository. Honest replies quote whole-word cut-outs of the cited lines (with whitespace
reshuffled) and come in the envelopes models use (a fence, a sentence before it, a remark after
it, extra keys, line numbers as strings); corrupted ones carry exactly one defect, among them a
prose span stating a fact and a trivial quote (one character, or a cut inside a word). Ground
truth for defects that could match by luck (shifted lines, another label) is checked with an
independent regex normaliser, and such a case is regenerated. Prints: corrupted accepted (must be
0), valid refused (must be 0), and the gate's cost per answer.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codecite_lsp.core import records  # noqa: E402
from codecite_lsp.core.records import Source  # noqa: E402
from codecite_lsp.ingest.injection import findings  # noqa: E402
from codecite_lsp.verify.gate import GatePassed, verify  # noqa: E402

Reply = dict[str, Any]
ORDINALS = ("first", "second", "third", "fourth")


def corpus() -> list[tuple[str, list[str]]]:
    files = sorted((ROOT / "codecite_lsp").rglob("*.py"))
    fixture = ROOT / "tests" / "fixtures" / "sample_repo"
    files += sorted(p for p in fixture.rglob("*") if p.is_file() and p.suffix in {".py", ".ts"})
    loaded = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")[:-1]
        # A file holding text addressed to a model (the scanner's own patterns) is untrusted
        # data: no claim rests on it alone, so an honest reply over it is no valid case.
        if len(lines) >= 12 and not findings(text):
            loaded.append((str(path.relative_to(ROOT)), lines))
    return loaded


def norm(text: str) -> str:
    """Independent of the gate's code: the ground-truth notion of 'occurs verbatim'."""
    return re.sub(r"\s+", " ", text).strip()


def make_sources(rng: random.Random, files: list[tuple[str, list[str]]]) -> list[Source]:
    sources = []
    for number in range(1, rng.randint(4, 8) + 1):
        path, lines = rng.choice(files)
        size = rng.randint(10, min(40, len(lines)))
        start = rng.randint(1, len(lines) - size + 1)
        text = "\n".join(lines[start - 1 : start - 1 + size])
        sources.append(records.outside_source(f"S{number}", path, start, start + size - 1, text))
    return sources


def lines_of(source: Source, start: int, end: int) -> str:
    return "\n".join(
        source.result.chunk.text.split("\n")[
            start - source.result.chunk.start_line : end - source.result.chunk.start_line + 1
        ]
    )


def reshuffle_whitespace(rng: random.Random, quote: str) -> str:
    return re.sub(r"\s+", lambda _: rng.choice([" ", "  ", "\n", "\t", " \n    "]), quote)


def word_edges(text: str) -> list[int]:
    """Offsets not inside a word: where an honest quote may start or end (``$`` is a word
    character, as in JavaScript's ``$ref`` and the gate's whole-word rule)."""
    inner = {m.start() for m in re.finditer(r"(?<=[\w$])[\w$]", text)}
    return [i for i in range(len(text) + 1) if i not in inner]


def honest_citation(rng: random.Random, sources: list[Source]) -> dict[str, Any]:
    while True:
        source = rng.choice(sources)
        start = rng.randint(source.result.chunk.start_line, source.result.chunk.end_line)
        end = min(source.result.chunk.end_line, start + rng.randint(0, 3))
        text = lines_of(source, start, end)
        edges = word_edges(text)
        cut_from = rng.choice([e for e in edges if e <= len(text) // 3] or [0])
        cut_to = rng.choice([e for e in edges if e >= cut_from + (len(text) - cut_from) // 2])
        quote = text[cut_from:cut_to]
        if len(re.sub(r"\s", "", quote)) >= 8:
            if rng.random() < 0.5:
                quote = reshuffle_whitespace(rng, quote)
            return {"source": source.label, "start_line": start, "end_line": end, "quote": quote}


def honest_reply(rng: random.Random, sources: list[Source]) -> Reply:
    spans: list[dict[str, Any]] = [{"kind": "prose", "text": "Here is what the code shows."}]
    for index in range(rng.randint(1, 4)):
        citations = [honest_citation(rng, sources) for _ in range(rng.randint(1, 2))]
        # No digits: a number in a claim is content the quote must show (verify/support.py).
        text = f"The {ORDINALS[index]} claim."
        spans.append({"kind": "claim", "text": text, "citations": citations})
    return {"spans": spans, "refuse": None}


def _pick(reply: Reply, rng: random.Random) -> dict[str, Any]:
    claims = [s for s in reply["spans"] if s["kind"] == "claim"]
    return rng.choice(rng.choice(claims)["citations"])


def _by_label(sources: list[Source], label: str) -> Source:
    return next(s for s in sources if s.label == label)


def changed_character(reply: Reply, sources: list[Source], rng: random.Random) -> bool:
    cite = _pick(reply, rng)
    spots = [i for i, ch in enumerate(cite["quote"]) if not ch.isspace()]
    at = rng.choice(spots)
    cite["quote"] = cite["quote"][:at] + "\u00a7" + cite["quote"][at + 1 :]  # '§': not in corpus
    return "\u00a7" not in "".join(s.result.chunk.text for s in sources)


def flipped_case(reply: Reply, sources: list[Source], rng: random.Random) -> bool:
    cite = _pick(reply, rng)
    cite["quote"] = cite["quote"].swapcase()
    target = _by_label(sources, cite["source"])
    return norm(cite["quote"]) not in norm(lines_of(target, cite["start_line"], cite["end_line"]))


def shifted_lines(reply: Reply, sources: list[Source], rng: random.Random) -> bool:
    cite = _pick(reply, rng)
    target = _by_label(sources, cite["source"])
    size = cite["end_line"] - cite["start_line"]
    start = rng.randint(target.result.chunk.start_line, target.result.chunk.end_line - size)
    cite["start_line"], cite["end_line"] = start, start + size
    return norm(cite["quote"]) not in norm(lines_of(target, start, start + size))


def other_label(reply: Reply, sources: list[Source], rng: random.Random) -> bool:
    cite = _pick(reply, rng)
    target = rng.choice([s for s in sources if s.label != cite["source"]])
    start = rng.randint(target.result.chunk.start_line, target.result.chunk.end_line)
    cite.update(
        source=target.label, start_line=start, end_line=min(target.result.chunk.end_line, start + 3)
    )
    held = lines_of(target, cite["start_line"], cite["end_line"])
    return norm(cite["quote"]) not in norm(held)


def unknown_label(reply: Reply, sources: list[Source], rng: random.Random) -> bool:
    _pick(reply, rng)["source"] = rng.choice([f"S{len(sources) + rng.randint(1, 5)}", "S0", "S"])
    return True


def outside_source(reply: Reply, sources: list[Source], rng: random.Random) -> bool:
    cite = _pick(reply, rng)
    target = _by_label(sources, cite["source"])
    if rng.random() < 0.5:
        cite["start_line"] = target.result.chunk.start_line - rng.randint(1, 5)
    else:
        cite["end_line"] = target.result.chunk.end_line + rng.randint(1, 5)
    return True


def line_number_prefix(reply: Reply, sources: list[Source], rng: random.Random) -> bool:
    cite = _pick(reply, rng)
    cite["quote"] = f"{cite['start_line']:>4} | {cite['quote']}"
    target = _by_label(sources, cite["source"])
    return norm(cite["quote"]) not in norm(lines_of(target, cite["start_line"], cite["end_line"]))


def empty_quote(reply: Reply, sources: list[Source], rng: random.Random) -> bool:
    _pick(reply, rng)["quote"] = rng.choice(["", " ", "\n\t "])
    return True


def uncited_claim(reply: Reply, sources: list[Source], rng: random.Random) -> bool:
    rng.choice([s for s in reply["spans"] if s["kind"] == "claim"])["citations"] = []
    return True


def prose_only(reply: Reply, sources: list[Source], rng: random.Random) -> bool:
    reply["spans"] = [s for s in reply["spans"] if s["kind"] == "prose"]
    return True


def prose_fact(reply: Reply, sources: list[Source], rng: random.Random) -> bool:
    fact = rng.choice(
        [
            "Click stores every parameter source in a SQLite file under ~/.click.",
            "The cache is flushed every 30 seconds.",
            "Keys are rotated by the rotation job.",
            "It does not retry.",
            "See `rotate_key` in keyvault/keys.py.",
        ]
    )
    reply["spans"].insert(rng.randint(0, len(reply["spans"])), {"kind": "prose", "text": fact})
    return True


def trivial_quote(reply: Reply, sources: list[Source], rng: random.Random) -> bool:
    cite = _pick(reply, rng)
    target = _by_label(sources, cite["source"])
    held = norm(lines_of(target, cite["start_line"], cite["end_line"]))
    inside = [m.start() for m in re.finditer(r"(?<=\w)\w", held)]
    if inside and rng.random() < 0.6:  # a cut inside a word: "lue = opts.ge"
        at = rng.choice(inside)
        cite["quote"] = quote = held[at : at + rng.randint(1, 12)].strip()
        # Not a defect if the same text also stands as whole words in these lines.
        whole = rf"(?<![\w]){re.escape(quote)}" if quote[:1].isalnum() else re.escape(quote)
        whole += r"(?![\w])" if quote[-1:].isalnum() else ""
        return bool(quote) and re.search(whole, held) is None
    marks = [ch for ch in held if not ch.isalnum() and not ch.isspace()]
    if not marks:
        return False
    cite["quote"] = rng.choice(marks)  # one punctuation character
    # A line of one character (a closing bracket) may be quoted whole.
    lines = lines_of(target, cite["start_line"], cite["end_line"]).split("\n")
    return all(norm(line) != cite["quote"] for line in lines)


CORRUPTIONS: list[Callable[[Reply, list[Source], random.Random], bool]] = [
    changed_character,
    flipped_case,
    shifted_lines,
    other_label,
    unknown_label,
    outside_source,
    line_number_prefix,
    empty_quote,
    uncited_claim,
    prose_only,
    prose_fact,
    trivial_quote,
]


def envelope(rng: random.Random, reply: Reply) -> str:
    """An honest reply in one of the envelopes models send."""
    kind = rng.randrange(6)
    if kind == 1:
        return f"```json\n{json.dumps(reply, indent=2)}\n```"
    if kind == 2:
        return f"Here is the answer:\n\n```json\n{json.dumps(reply)}\n```\nHope this helps."
    if kind == 3:
        return json.dumps(reply) + "\n\nI only used the sources given."
    if kind == 4:
        loose = json.loads(json.dumps(reply))
        loose["confidence"] = "high"
        for span in loose["spans"]:
            for cite in span.get("citations", []):
                cite["start_line"], cite["path"] = str(cite["start_line"]), "x.py"
        return json.dumps(loose)
    return json.dumps(reply)


def generate(
    rng: random.Random, files: list[tuple[str, list[str]]]
) -> tuple[str, str, list[Source]]:
    """(kind, raw reply, sources): kind is 'valid', a corruption name, or 'truncated_json'."""
    sources = make_sources(rng, files)
    reply = honest_reply(rng, sources)
    if rng.random() < 0.4:
        return "valid", envelope(rng, reply), sources
    if rng.random() < 0.05:
        raw = json.dumps(reply)
        return "truncated_json", raw[: rng.randint(0, len(raw) - 1)], sources
    while True:  # a corruption that matched by luck is no corruption: draw again
        corruption = rng.choice(CORRUPTIONS)
        attempt = json.loads(json.dumps(reply))
        if corruption(attempt, sources, rng):
            return corruption.__name__, json.dumps(attempt), sources


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=12_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    files = corpus()
    cases = [generate(rng, files) for _ in range(args.cases)]

    kinds: Counter[str] = Counter()
    wrong: Counter[str] = Counter()
    costs_ns = []
    for kind, raw, sources in cases:
        started = time.perf_counter_ns()
        result = verify(raw, sources)
        costs_ns.append(time.perf_counter_ns() - started)
        kinds[kind] += 1
        passed = isinstance(result, GatePassed)
        if passed != (kind == "valid"):
            wrong[kind] += 1

    valid = kinds["valid"]
    corrupted = sum(kinds.values()) - valid
    corrupted_accepted = sum(n for k, n in wrong.items() if k != "valid")
    costs_ms = sorted(ns / 1e6 for ns in costs_ns)
    median = statistics.median(costs_ms)
    p95 = costs_ms[int(0.95 * (len(costs_ms) - 1))]
    print(f"cases: {len(cases)} ({valid} valid, {corrupted} corrupted) over {len(files)} files")
    for kind, count in sorted(kinds.items()):
        print(f"  {kind:<20} {count:>6}  misjudged {wrong[kind]}")
    print(f"corrupted accepted: {corrupted_accepted}")
    print(f"valid refused: {wrong['valid']}")
    print(
        f"gate cost per answer: median {median:.3f} ms, p95 {p95:.3f} ms, max {costs_ms[-1]:.3f} ms"
    )
    ok = corrupted_accepted == 0 and wrong["valid"] == 0 and median <= 1.0
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
