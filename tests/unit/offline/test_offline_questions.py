"""The offline answerer says less, but right: whole statements, the question's words or a
refusal, definitions before uses. Replayed on a committed question set: the sources retrieval
chose from the installed requests package for each question (bench/eval_offline.py measures the
same set live and writes the snapshot)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from codecite_lsp.core.answers import ClaimSpan
from codecite_lsp.core.records import Source, outside_source
from codecite_lsp.offline.evidence import Evidence
from codecite_lsp.offline.extractive import answer
from codecite_lsp.verify.gate import GatePassed, GateRefusedByModel, verify

SNAPSHOT = Path(__file__).parents[2] / "fixtures" / "offline" / "sources.json"
QUESTIONS: list[dict[str, Any]] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
ANSWERABLE = [q for q in QUESTIONS if q["expect"]]
UNANSWERABLE = [q for q in QUESTIONS if not q["expect"]]
_DOC = re.compile(r'^\s*(#|"""|\'\'\'|\*|//|:param|:type|:rtype)')
_ENDS = re.compile(r"""[.:!?;]["')\]]*\s*(\"{3}|'{3})?\s*$""")


def _run(item: dict[str, Any]) -> tuple[list[Source], object]:
    sources = [outside_source(**source) for source in item["sources"]]
    evidence = Evidence(**item["evidence"])
    return sources, verify(answer(item["question"], sources, evidence), sources)


def test_the_set_is_real_questions_on_a_real_repository() -> None:
    assert len(ANSWERABLE) >= 20 and len(UNANSWERABLE) >= 5
    assert all(q["sources"] for q in QUESTIONS if q["expect"])


@pytest.mark.parametrize("item", UNANSWERABLE, ids=[q["question"] for q in UNANSWERABLE])
def test_what_the_repository_cannot_answer_is_refused(item: dict[str, Any]) -> None:
    sources, result = _run(item)
    assert not sources or isinstance(result, GateRefusedByModel), result


def _file_line(sources: list[Source], path: str, number: int) -> str | None:
    for source in sources:
        if (
            source.result.chunk.path == path
            and source.result.chunk.start_line <= number <= source.result.chunk.end_line
        ):
            return source.result.chunk.text.split("\n")[number - source.result.chunk.start_line]
    return None


def test_answers_quote_whole_statements_and_cite_the_right_files() -> None:
    answered = on_target = 0
    for item in ANSWERABLE:
        sources, result = _run(item)
        if not isinstance(result, GatePassed):
            continue
        answered += 1
        claims = [span for span in result.spans if isinstance(span, ClaimSpan)]
        cited = {c.path for claim in claims for c in claim.citations}
        on_target += any(path.endswith(tuple(item["expect"])) for path in cited)
        for citation in (c for claim in claims for c in claim.citations):
            code = [line for line in citation.quote.split("\n") if not _DOC.match(line)]
            joined = re.sub(r"\"[^\"]*\"|'[^']*'", "", "\n".join(code))
            opened = sum(joined.count(c) for c in "([{") - sum(joined.count(c) for c in ")]}")
            assert opened == 0, (item["question"], citation.quote)  # no dangling fragment
            assert not code or not code[-1].rstrip().endswith(","), citation.quote
            above = _file_line(sources, citation.path, citation.start_line - 1)
            first = citation.quote.split("\n")[0]
            if above is not None and _DOC.match(first) and _DOC.match(above):
                # A comment never starts in the middle of the sentence of the line above.
                assert _ENDS.search(above) or not above.strip("#*/ \t"), citation.quote
            assert not re.match(r"\s*(from\s+\S+\s+)?import\b", first), citation.quote
    assert answered >= len(ANSWERABLE) - 2
    assert on_target >= answered - 1


def _sources(*files: tuple[str, str]) -> list[Source]:
    out = []
    for number, (path, text) in enumerate(files, start=1):
        count = text.count("\n") + 1
        out.append(outside_source(f"S{number}", path, 1, count, text))
    return out


def test_a_fragment_inside_a_call_is_widened_to_the_whole_statement() -> None:
    code = (
        "def connect(self):\n"
        "    pool = self.pool_manager\n"
        "    return pool.connection_from_url(\n"
        "        url,\n"
        "        retries=self.max_retries,\n"
        "        pool_timeout=self.pool_timeout,\n"
        "    )"
    )
    sources = _sources(("adapter.py", code))
    raw = answer("how are max retries passed to the pool connection?", sources)
    result = verify(raw, sources)
    assert isinstance(result, GatePassed), raw
    quotes = [c.quote for s in result.spans if isinstance(s, ClaimSpan) for c in s.citations]
    assert quotes and all(q.count("(") == q.count(")") for q in quotes), quotes
    assert any("retries=self.max_retries," in q and q.rstrip().endswith(")") for q in quotes)


def test_a_comment_is_quoted_from_the_start_of_its_sentence() -> None:
    code = (
        "def send(self):\n"
        "    # Special case: allow http to https redirects on the standard\n"
        "    # ports, which keeps the credentials of the session.\n"
        "    keep = True\n"
        "    return keep"
    )
    sources = _sources(("send.py", code))
    result = verify(answer("which credentials does the session keep?", sources), sources)
    assert isinstance(result, GatePassed)
    quotes = [c.quote for s in result.spans if isinstance(s, ClaimSpan) for c in s.citations]
    assert quotes and not any(q.lstrip().startswith("# ports") for q in quotes), quotes


def test_definitions_come_before_their_uses() -> None:
    # The line using rotate matches the question best; the definition of rotate still leads.
    use = (
        "def refresh_all(keys):\n"
        "    for key in keys:\n"
        "        fresh = rotate(key)  # issue a fresh key for the client"
    )
    definition = 'def rotate(key):\n    """Return a replacement."""\n    return new_key(key)'
    sources = _sources(("jobs.py", use), ("keys.py", definition))
    result = verify(answer("Where does rotate issue a fresh key?", sources), sources)
    assert isinstance(result, GatePassed)
    cited = [s.citations[0] for s in result.spans if isinstance(s, ClaimSpan)]
    order = [c.path for c in cited]
    assert "jobs.py" in order and order[0] == "keys.py"
    # ... by the statement doing it (the question asks what rotate does, not what it is).
    assert cited[0].quote == "return new_key(key)"


def test_lines_inside_an_import_list_or_an_open_call_are_never_quoted_alone() -> None:
    code = (
        "from .models import (  # noqa: F401\n"
        "    DEFAULT_REDIRECT_LIMIT,\n"
        "    REDIRECT_STATI,  # type: ignore[reportUnusedImport]\n"
        ")\n"
        "\n"
        "def limit(extra):\n"
        "    total = min(\n"
        "        DEFAULT_REDIRECT_LIMIT + extra\n"
        "    )\n"
        "    return total"
    )
    sources = _sources(("sessions.py", code))
    result = verify(answer("how is the default redirect limit used?", sources), sources)
    assert isinstance(result, GatePassed)
    quotes = [c.quote for s in result.spans if isinstance(s, ClaimSpan) for c in s.citations]
    assert quotes and not any("REDIRECT_STATI" in q for q in quotes)  # the import list
    assert any(q.lstrip().startswith("total = min(") and q.rstrip().endswith(")") for q in quotes)
