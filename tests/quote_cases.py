"""Generated quotes over real files, and the three places that judge them (issue 19 item 3): the
gate, citation resolution (history, re-anchoring) and MCP ``verify_citations``. Shared by the unit
property test, the fuzz tier and bench/bench_quote_rule.py (10,000 quotes)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from codecite_lsp.core.answers import Citation, Exact
from codecite_lsp.core.records import content_hash, outside_source
from codecite_lsp.verify.agent_quotes import check_quote
from codecite_lsp.verify.anchors import resolve
from codecite_lsp.verify.gate import GateFailed, GatePassed, verify
from codecite_lsp.verify.quotes import normalise_ws, split_lines

ROOT = Path(__file__).resolve().parents[1]
FILES = [
    ROOT / "codecite_lsp" / "verify" / "gate.py",
    ROOT / "codecite_lsp" / "verify" / "quotes.py",
    ROOT / "codecite_lsp" / "verify" / "agent_quotes.py",
    *sorted((ROOT / "tests" / "fixtures" / "sample_repo").rglob("*.py")),
    *sorted((ROOT / "tests" / "fixtures" / "sample_repo").rglob("*.ts")),
    *sorted((ROOT / "tests" / "fixtures" / "sample_repo").rglob("*.md")),
]
TEXTS = [(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")) for path in FILES]


@dataclass(frozen=True)
class Case:
    path: str
    text: str
    start_line: int
    end_line: int
    quote: str


@dataclass(frozen=True)
class Judged:
    gate: bool
    resolution: bool
    mcp: bool

    @property
    def agree(self) -> bool:
        return self.gate == self.resolution == self.mcp


_CLAIM_RULES = frozenset({"untrusted_source", "claim_unsupported"})
_SPACES = st.sampled_from([" ", "  ", "\n", "\n    ", "\t", " \n "])


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """A cited range of a real file and a quote: mostly cut out of lines at or near the range
    (whole words, or anywhere; whitespace reshuffled), sometimes a few characters, a whole line,
    or text of its own."""
    path, text = draw(st.sampled_from(TEXTS))
    lines = split_lines(text)
    start = draw(st.integers(1, len(lines)))
    end = min(len(lines), start + draw(st.integers(0, 4)))
    # The quote's own lines: the cited ones, or ones a little off them.
    first = min(len(lines), max(1, start + draw(st.sampled_from([0, 0, 0, -1, 1, -3]))))
    last = min(len(lines), max(first, end + draw(st.sampled_from([0, 0, 0, 1, -1, 3]))))
    held = normalise_ws("\n".join(lines[first - 1 : last]))
    kind = draw(st.sampled_from(["words", "words", "words", "cut", "cut", "short", "line", "own"]))
    if kind == "line" or not held:
        quote = lines[first - 1]
    elif kind == "words":  # whole space-separated words, as an honest model quotes
        words = held.split(" ")
        at = draw(st.integers(0, len(words) - 1))
        quote = " ".join(words[at : at + draw(st.integers(1, len(words) - at))])
    elif kind == "own":
        quote = draw(st.text(alphabet=st.characters(codec="utf-8"), max_size=12))
    else:
        size = draw(st.integers(1, 3)) if kind == "short" else draw(st.integers(1, len(held)))
        size = min(size, len(held))
        at = draw(st.integers(0, len(held) - size))
        quote = held[at : at + size]
    if draw(st.booleans()):
        quote = quote.replace(" ", draw(_SPACES))
    return Case(path, text, start, end, quote)


def judge(case: Case) -> Judged:
    """Whether each of the three says the quote holds on exactly the cited lines."""
    count = len(split_lines(case.text))
    source = outside_source(
        label="S1",
        path=case.path,
        start_line=1,
        end_line=count,
        text=case.text,
        symbol=None,
        content_hash=content_hash(case.text),
        revision="rev",
        start_byte=0,
    )
    cite = {
        "source": "S1",
        "start_line": case.start_line,
        "end_line": case.end_line,
        "quote": case.quote,
    }
    reply = {"spans": [{"kind": "claim", "text": "It holds.", "citations": [cite]}]}
    result = verify(reply, [source])
    # The quote rule's verdict: the gate's claim rules (a quote an instruction on its lines tells
    # the reader to say, gate.py's own docstring quoting "tell the user that") are not it.
    claim_rules = isinstance(result, GateFailed) and all(
        failure.why in _CLAIM_RULES for failure in result.failures
    )
    gate = isinstance(result, GatePassed) or claim_rules
    citation = Citation(
        path=case.path,
        start_line=case.start_line,
        end_line=case.end_line,
        quote=case.quote,
        content_hash="",  # judged by the quote, as history does once the lines changed
        revision="rev",
    )
    resolution = resolve(citation, case.text)
    exact = resolution == Exact(path=case.path, start_line=case.start_line, end_line=case.end_line)
    verdict = check_quote(case.path, case.start_line, case.end_line, case.quote, case.text)
    return Judged(gate, exact, verdict.state == "verified")
