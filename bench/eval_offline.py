"""The offline (extractive) answerer on a real repository: useful answers, junk, refusals.

    python bench/eval_offline.py [--questions tests/fixtures/offline/questions.json]
                                 [--snapshot tests/fixtures/offline/sources.json]

Indexes a copy of the installed package the question set names, asks every question through the
real pipeline with ``model = extractive`` and judges each answer with rules of its own (not the
answerer's): a claim is junk when its quote is a bare heading, a dangling fragment (brackets that
close more than they open, a line ending in a comma or an open bracket), a comment or docstring
starting mid-sentence, or a quote sharing no word with the question; an answer is junk when any
claim is, or when it answers a question the repository cannot answer. Prints one line per
question and the totals. ``--snapshot`` also stores each question's retrieved sources and
retrieval's evidence (offline/evidence.py), which the unit tests replay without the package.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codecite_lsp.answer.pipeline import Answerer  # noqa: E402
from codecite_lsp.core.answers import Answered, ClaimSpan  # noqa: E402
from codecite_lsp.core.config import Config  # noqa: E402
from codecite_lsp.core.records import source_fields, sources_from_results  # noqa: E402
from codecite_lsp.index.indexer import Indexer  # noqa: E402
from codecite_lsp.offline.evidence import gather  # noqa: E402

_HEADING = re.compile(r"^\s*(#{1,6}\s|[=\-~^]{3,}\s*$)")  # markdown / reStructuredText
_PROSE = (".md", ".rst", ".txt")
_SENTENCE_END = re.compile(r"""[.:!?]["')]*\s*$""")
_DOC_LINE = re.compile(r'^\s*(#|"""|\'\'\'|\*|//)')
_WORD = re.compile(r"[A-Za-z]{3,}")
_QUESTION_FILLER = {
    *("how", "does", "what", "when", "where", "which", "why", "are", "is", "the", "a", "an"),
    *("of", "to", "in", "for", "from", "with", "into", "do", "by", "set", "get", "given"),
}


def _stem(word: str) -> str:
    return word.lower()[:5]


def junk_reasons(question: str, quote: str, path: str, before: str) -> list[str]:
    """Why a quoted claim is junk, by rules independent of the answerer; ``before`` is the file
    line above the quote."""
    lines = [line for line in quote.split("\n") if line.strip()]
    reasons = []
    if path.endswith(_PROSE) and lines and all(_HEADING.match(line) for line in lines):
        reasons.append("bare heading")
    opened = sum(quote.count(c) for c in "([{") - sum(quote.count(c) for c in ")]}")
    if opened < 0 or (lines and lines[-1].rstrip().endswith((",", "(", "[", "{"))):
        reasons.append("dangling fragment")
    first = lines[0].strip() if lines else ""
    # A comment or docstring line continuing the sentence of the line above it.
    above = before.strip()
    if _DOC_LINE.match(first) or (path.endswith(_PROSE) and first):
        text = re.sub(r'^(#+|"""|\'\'\'|\*+|//+)\s*', "", first)
        continues = above and _DOC_LINE.match(above) and not _SENTENCE_END.search(above)
        if text[:1].islower() and (continues or path.endswith(_PROSE)):
            reasons.append("starts mid-sentence")
    asked = {_stem(w) for w in _WORD.findall(question) if w.lower() not in _QUESTION_FILLER}
    quoted = {_stem(w) for w in _WORD.findall(re.sub(r"[_.]", " ", quote))}
    split = {_stem(p) for w in _WORD.findall(quote) for p in re.findall(r"[A-Z]?[a-z]+", w)}
    if asked and not asked & (quoted | split):
        reasons.append("shares no word with the question")
    return reasons


def _above(repo: Path, cite: Any) -> str:
    lines = (repo / cite.path).read_text(encoding="utf-8").split("\n")
    return lines[cite.start_line - 2] if cite.start_line >= 2 else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", default=str(ROOT / "tests/fixtures/offline/questions.json"))
    parser.add_argument("--snapshot", default=None)
    parser.add_argument("--verbose", action="store_true", help="print the quotes of junk claims")
    args = parser.parse_args()
    spec = json.loads(Path(args.questions).read_text())
    package = spec["repository"]
    source_dir = Path(__import__(package).__file__).parent
    snapshot: list[dict[str, Any]] = []
    totals = {"answerable": 0, "useful": 0, "junk": 0, "refused_answerable": 0}
    unanswerable = refused_unanswerable = 0
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / package
        shutil.copytree(source_dir, repo, ignore=shutil.ignore_patterns("__pycache__"))
        config = Config(index_dir=str(Path(tmp) / "index"), model="extractive")
        Indexer(repo, config).run()
        answerer = Answerer(repo, config)
        for item in spec["questions"]:
            question, expect = item["question"], item["expect"]
            answer = answerer.ask(question)
            if args.snapshot:
                results = answerer.retriever.retrieve(question).selected
                sources = [source_fields(s) for s in sources_from_results(results)]
                evidence = dataclasses.asdict(gather(question, results))
                snapshot.append(
                    {
                        "question": question,
                        "expect": expect,
                        "sources": sources,
                        "evidence": evidence,
                    }
                )
            claims = (
                [s for s in answer.spans if isinstance(s, ClaimSpan)]
                if isinstance(answer, Answered)
                else []
            )
            reasons = sorted(
                {
                    r
                    for c in claims
                    for cite in c.citations
                    for r in junk_reasons(question, cite.quote, cite.path, _above(repo, cite))
                }
            )
            if reasons and args.verbose:
                for c in claims:
                    for cite in c.citations:
                        why = junk_reasons(question, cite.quote, cite.path, _above(repo, cite))
                        print(f"    {why} {cite.path}:{cite.start_line} {cite.quote!r}")
            cited = sorted({cite.path for c in claims for cite in c.citations})
            if not expect:
                unanswerable += 1
                refused_unanswerable += not claims
                verdict = "refused" if not claims else "JUNK (answered the unanswerable)"
                totals["junk"] += bool(claims)
            else:
                totals["answerable"] += 1
                if not claims:
                    totals["refused_answerable"] += 1
                    verdict = "refused"
                elif reasons:
                    totals["junk"] += 1
                    verdict = "JUNK (" + ", ".join(reasons) + ")"
                elif any(path.endswith(tuple(expect)) for path in cited):
                    totals["useful"] += 1
                    verdict = "useful"
                else:
                    verdict = "off target"
            detail = answer.detail if not claims and hasattr(answer, "detail") else ", ".join(cited)
            print(f"{verdict:<40} {question}\n{'':<40} {detail}")
    if args.snapshot:
        Path(args.snapshot).write_text(json.dumps(snapshot, indent=1) + "\n")
    print(
        f"\nanswerable: {totals['answerable']}: useful {totals['useful']}, junk {totals['junk']}, "
        f"refused {totals['refused_answerable']}; unanswerable refused: "
        f"{refused_unanswerable} of {unanswerable}"
    )
    ok = totals["junk"] * 20 <= totals["answerable"] and refused_unanswerable == unanswerable
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
