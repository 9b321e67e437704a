"""Extractive answers about THIS repository: each must cite the code that holds the answer.

A snapshot of the repository's files (what git would track, minus this file, whose question list
would otherwise answer every question) is indexed into a temporary folder; the expected lines are
found with ``ast`` in that snapshot, so the test follows edits to the code it asks about.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codecite_lsp.answer.pipeline import Answerer
from codecite_lsp.core.answers import Answered, ClaimSpan
from codecite_lsp.core.config import Config

ROOT = Path(__file__).resolve().parents[3]
THIS = "tests/unit/answer/test_self_questions.py"

# question -> the definitions (path, qualified name; "" is the module docstring) holding the answer
QUESTIONS: dict[str, list[tuple[str, str]]] = {
    "How is a quote checked against a source?": [
        ("codecite_lsp/verify/gate.py", "_check"),
        ("codecite_lsp/verify/gate.py", "verify"),
        # The MCP tool's checker does the same against a file's current text.
        ("codecite_lsp/verify/agent_quotes.py", ""),
        ("codecite_lsp/verify/agent_quotes.py", "check_quote"),
    ],
    "Where are secret files excluded?": [
        ("codecite_lsp/ingest/secrets.py", "is_secret_path"),
        ("codecite_lsp/ingest/ignore.py", "IgnoreRules.why_ignored"),
        ("codecite_lsp/ingest/secrets.py", ""),
        ("codecite_lsp/ingest/ignore.py", ""),
    ],
    "How does a citation resolve after its file was edited?": [
        ("codecite_lsp/verify/anchors.py", "resolve"),
        ("codecite_lsp/verify/quotes.py", ""),
    ],
    "How are transient model errors retried with backoff?": [
        ("codecite_lsp/answer/llm.py", "complete"),
        ("codecite_lsp/answer/llm.py", "_classify"),
    ],
    "How is the trace log summarised for codecite stats?": [
        ("codecite_lsp/answer/trace.py", "summarise"),
        ("codecite_lsp/answer/trace.py", ""),
    ],
    "How is reciprocal rank fusion computed?": [("codecite_lsp/retrieve/scoring.py", "rrf")],
    "What does answer_to_text print for a refused answer?": [
        ("codecite_lsp/answer/render.py", "answer_to_text")
    ],
    "How is a truncated last line of the history file tolerated?": [
        ("codecite_lsp/answer/trace.py", "read_lines"),
        ("codecite_lsp/answer/trace.py", "append_line"),
        ("codecite_lsp/answer/history.py", "History.entries"),
        ("codecite_lsp/answer/trace.py", ""),
    ],
    "How are retrieved sources fenced in the prompt so they cannot act as instructions?": [
        ("codecite_lsp/answer/prompt.py", "_fence_token"),
        ("codecite_lsp/answer/prompt.py", "render_source"),
        ("codecite_lsp/answer/prompt.py", "build_messages"),
        ("codecite_lsp/answer/prompt.py", ""),
    ],
    "When is the model not called because nothing clears the relevance floor?": [
        ("codecite_lsp/answer/pipeline.py", "Answerer._answer"),
        ("codecite_lsp/retrieve/retriever.py", "Retriever.retrieve"),
        ("codecite_lsp/answer/pipeline.py", ""),
    ],
}


def definition_lines(repo: Path, path: str, qualified: str) -> tuple[int, int]:
    """First and last line of a function/method/class (or of the module docstring)."""
    tree = ast.parse((repo / path).read_text(encoding="utf-8"))
    scope: list[ast.stmt] = tree.body
    found: ast.stmt = scope[0]  # the docstring expression when ``qualified`` is ""
    for part in filter(None, qualified.split(".")):
        found = next(
            node
            for node in scope
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.name == part
        )
        scope = found.body
    assert found.end_lineno is not None
    return found.lineno, found.end_lineno


def snapshot(dest: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout.split("\0")  # fmt: skip
    for rel in filter(None, listed):
        source = ROOT / rel
        if rel == THIS or not source.is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest / rel)
    return dest


@pytest.fixture(scope="module")
def answerer(tmp_path_factory: pytest.TempPathFactory) -> Answerer:
    base = tmp_path_factory.mktemp("self")
    repo = snapshot(base / "repo")
    index_dir = base / "index"
    subprocess.run(
        [sys.executable, "-m", "codecite_lsp", "index", "--quiet", "--repo", str(repo),
         "--index-dir", str(index_dir)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return Answerer(repo, Config(index_dir=str(index_dir)))


@pytest.mark.parametrize("question", list(QUESTIONS))
def test_extractive_answer_cites_the_lines_that_hold_the_answer(
    answerer: Answerer, question: str
) -> None:
    answer = answerer.ask(question)
    assert isinstance(answer, Answered), answer

    cited = [c for s in answer.spans if isinstance(s, ClaimSpan) for c in s.citations]
    targets = {
        (path, definition_lines(answerer.repo, path, name)) for path, name in QUESTIONS[question]
    }
    hits = [
        c
        for c in cited
        for path, (first, last) in targets
        if c.path == path and c.start_line <= last and first <= c.end_line
    ]
    assert hits, json.dumps(
        {"expected": sorted(targets), "cited": [(c.path, c.start_line, c.end_line) for c in cited]}
    )
