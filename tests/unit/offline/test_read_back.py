"""Indexed text read back (the offline answer's definitions, the hover's outline, retrieval's
signature lines) is parsed in the resident worker: the same answers as parsing in the process,
one round trip for a request's pieces, none for a piece read before, and a piece that kills the
worker reads as nothing, logged once."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

import pytest
from hostile_inputs import KOTLIN_BOMB, MARKDOWN_BOMB, NEST_PY

from codecite_lsp.answer.hover import extractive_answer
from codecite_lsp.core.records import Source, outside_source
from codecite_lsp.ingest import readback, workers
from codecite_lsp.ingest.guard import UNGUARDED_ENV
from codecite_lsp.ingest.readback import read_isolated
from codecite_lsp.ingest.syntax import headers, outline
from codecite_lsp.offline.definitions import definitions
from codecite_lsp.offline.extractive import answer
from codecite_lsp.verify.gate import GatePassed, verify

PIECES = [
    (
        "keys.py",
        '''class KeyStore:
    """Keys by client."""

    @staticmethod
    def rotate(
        store: dict[str, str], client: str
    ) -> str:
        return store[client]
''',
    ),
    ("inside.py", 'Keys by client.\n"""\n\ndef rotate(store):\n    return store\n'),  # docstring
    (
        "store.ts",
        "export class Store {\n  rotate(client: string): string {\n    return client;\n  }\n}\n",
    ),
    ("cut.ts", "  rotate(client: string): string {\n    return client;\n  }\n"),  # from a class
    (
        "keys.go",
        "package keys\n\nfunc (s *Store) Rotate(client string) string {\n\treturn client\n}\n",
    ),
    ("Keys.php", "<?php\nfunction rotate($client) {\n    return $client;\n}\n"),
    ("Cut.php", "    public function rotate($client) {\n        return $client;\n    }\n"),
]
READERS = [definitions, outline, headers]


@pytest.fixture
def unguarded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fresh workers started with the checks off: the bombs crash tree-sitter for real (and
    would crash this process, were they parsed in it)."""
    monkeypatch.setenv(UNGUARDED_ENV, "1")
    monkeypatch.setattr(workers, "_RESIDENT", workers._Resident(0))  # none left running


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pieces sent in each round trip to the worker, from a fresh set of kept answers."""
    monkeypatch.setattr(readback, "_ANSWERS", readback._Answers(readback.CACHE_ENTRIES))
    sent: list[int] = []

    def counted(tasks: list[object]) -> list[object]:
        sent.append(len(tasks))
        return workers.isolated(tasks)

    monkeypatch.setattr(readback, "isolated", counted)
    return sent


@pytest.mark.parametrize("read", READERS, ids=lambda read: read.__name__)
def test_the_worker_reads_as_the_process_would(
    read: Callable[[str, str], list[object]], round_trips: list[int]
) -> None:
    expected = [read(path, text) for path, text in PIECES]
    # Real definitions to compare (without a context, outline and headers miss the fragments).
    assert sum(1 for found in expected if found) >= len(PIECES) - 2, expected
    assert read_isolated(read, PIECES) == expected
    assert round_trips == [len(PIECES)]  # one round trip for the request's pieces


def test_a_piece_read_before_costs_no_round_trip(round_trips: list[int]) -> None:
    first = read_isolated(definitions, PIECES[:3])
    assert read_isolated(definitions, PIECES[:3]) == first
    assert read_isolated(definitions, PIECES[1:4]) == [*first[1:], definitions(*PIECES[3])]
    assert round_trips == [3, 1]  # only the piece never read went
    # Plain text and blank pieces never leave the process.
    assert read_isolated(definitions, [("notes.txt", "def f(): pass"), ("a.py", "\n")]) == [[], []]
    assert round_trips == [3, 1]


def test_the_kept_answers_are_bounded(
    round_trips: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readback, "_ANSWERS", readback._Answers(2))
    read_isolated(definitions, PIECES[:3])  # the first is forgotten
    read_isolated(definitions, PIECES[1:3])
    read_isolated(definitions, PIECES[:1])
    assert round_trips == [3, 1]


def test_a_piece_that_kills_the_worker_reads_as_nothing_and_is_logged_once(
    round_trips: list[int], unguarded: None, caplog: pytest.LogCaptureFixture
) -> None:
    pieces = [PIECES[0], ("Deep.kt", KOTLIN_BOMB), PIECES[4]]
    with caplog.at_level(logging.WARNING, logger=readback.__name__):
        found = read_isolated(definitions, pieces)
        assert read_isolated(definitions, pieces) == found  # kept: not parsed again
        outlined = read_isolated(outline, [("notes.md", MARKDOWN_BOMB)])
    assert found == [definitions(*PIECES[0]), [], definitions(*PIECES[4])]
    assert outlined == [[]]
    assert round_trips == [3, 1]
    # The deep Markdown overflows the parser's stack: SIGSEGV, or SIGBUS where the guard page
    # lies elsewhere (seen under pytest-xdist).
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 2
    assert messages[0] == "the parser crashed (SIGABRT) on Deep.kt read back"
    assert re.fullmatch(
        r"the parser crashed \((SIGSEGV|SIGBUS)\) on notes\.md read back", messages[1]
    )
    # The worker that replaced them still reads.
    assert read_isolated(headers, PIECES[:1]) == [headers(*PIECES[0])]


def source(label: str, path: str, text: str, symbol: str | None = None) -> Source:
    return outside_source(label, path, 1, text.count("\n"), text, symbol)


def test_an_offline_answer_survives_a_source_that_kills_the_parser(unguarded: None) -> None:
    sources = [source("S1", "Deep.kt", KOTLIN_BOMB), source("S2", "wrapping.py", NEST_PY, "nest")]
    raw = answer("What does nest do?", sources)
    assert isinstance(verify(raw, sources), GatePassed)
    assert "Wrap the key in one more envelope" in raw


def test_a_hover_survives_a_source_whose_outline_kills_the_parser(unguarded: None) -> None:
    # Neither source is named after the symbol: both outlines are read, the Markdown one
    # crashes tree-sitter-markdown (SIGSEGV), and the Python one still holds the definition.
    bomb = "# T\n\n" + ">" * 260 + " nest\n"
    sources = [source("S1", "notes.md", bomb), source("S2", "wrapping.py", NEST_PY)]
    explained = extractive_answer("nest", sources)
    assert explained is not None
    assert "`nest` is defined in wrapping.py" in explained.model_dump_json()
