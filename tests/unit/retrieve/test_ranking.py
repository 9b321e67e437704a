"""Ranking rules of ``search`` beyond fusion: the chunks beside a file's best candidates, one
file's many chunks not crowding out the next file, and the reference graph's prior (real
tree-sitter chunks in real LanceDB, keyword only so the rules alone decide)."""

from __future__ import annotations

import threading
from pathlib import Path

from answer_helpers import index_files as _index

from codecite_lsp.core.config import Config
from codecite_lsp.core.records import Chunk, content_hash
from codecite_lsp.core.references import References
from codecite_lsp.retrieve.centrality import file_centrality
from codecite_lsp.retrieve.neighbours import neighbour_scores
from codecite_lsp.retrieve.prior import CentralityPrior
from codecite_lsp.retrieve.retriever import open_retriever

FILLER = "".join(f"    step_{n} = prepare(step_{n - 1})\n" for n in range(1, 9))


def _chunk(path: str, start: int) -> Chunk:
    """Lines start..start+9 of ``path``."""
    text = f"def f{start}():\n" + "    pass\n" * 9
    return Chunk(
        path,
        "python",
        start,
        start + 9,
        0,
        len(text),
        f"f{start}",
        "function",
        text,
        content_hash(text),
        "r1",
    )


def test_a_chunk_between_two_strong_candidates_is_lent_less_than_either() -> None:
    a, b, c, d = (_chunk("m.py", n) for n in (1, 11, 21, 31))
    lent = neighbour_scores({a.id: (a, 1.0), c.id: (c, 0.8)}, [a, b, c, d])
    assert set(lent) == {b.id, d.id}  # the chunks beside a candidate, not the candidates
    assert lent[d.id] < lent[b.id] < 1.0  # flanked by both gains more; never above its best


def test_a_helper_between_two_matching_functions_is_listed(tmp_path: Path) -> None:
    # pick_port holds none of the query's words: only its place between two matches finds it.
    config = _index(
        tmp_path,
        {
            "net.py": "def open_session(host):\n    '''Open a session to the host.'''\n"
            + FILLER
            + "    return session_for(host)\n\n\ndef pick_port(step_8):\n"
            + FILLER
            + "    return step_8 % 65536\n\n\n"
            "def close_session(session):\n    '''Close the session and its host connection.'''\n"
            + FILLER
            + "    return session.close()\n"
        },
    )
    found = open_retriever(tmp_path / "repo", config).search("open close session host", 5)
    assert [r.chunk.symbol for r in found] == ["open_session", "close_session", "pick_port"]
    assert found[2].score < found[1].score


# Six parsers of header lines in one file, and one helper in another that also matches.
_HEADER_PARSERS = {
    "parsing.py": "".join(
        f"def parse_header_{i}(raw):\n"
        "    '''Parse a header line: the header name and header value.'''\n"
        f"    return split_header(raw, {i})\n\n\n"
        for i in range(6)
    ),
    "values.py": "def header_value(raw):\n    '''The value of a header.'''\n    return raw[1]\n",
}


def test_one_file_with_many_matching_chunks_leaves_room_for_the_next_file(
    tmp_path: Path,
) -> None:
    config = _index(tmp_path, _HEADER_PARSERS)
    found = open_retriever(tmp_path / "repo", config).search("parse header name value", 2)
    assert [r.chunk.path for r in found] == ["parsing.py", "values.py"]


def test_the_file_the_repository_calls_is_central() -> None:
    rows = [
        ("core.py", ["load_config"], []),
        ("leaf.py", ["load_config_legacy"], []),
        *((f"user{i}.py", [f"main{i}"], ["load_config"]) for i in range(3)),
        # a name every file defines says nothing about which one is meant
        *((f"user{i}.py", ["__init__"], []) for i in range(3)),
        ("leaf.py", ["__init__"], ["__init__"]),
        ("README.md", [], []),
    ]
    central = file_centrality(References.of_rows(rows))
    assert central["core.py"] == 1.0
    assert central["core.py"] > central["leaf.py"]
    assert central["user0.py"] == central["user1.py"] == central["user2.py"]  # same places
    assert "README.md" not in central  # prose is outside the graph: neutral


def test_between_equal_matches_the_central_file_ranks_first(tmp_path: Path) -> None:
    body = (
        "    '''Read the settings file and merge the defaults.'''\n    return merge(read(path))\n"
    )
    files = {
        "aaa.py": "def load_settings_a(path):\n" + body,
        "zzz.py": "def load_settings_b(path):\n" + body,
    }
    for i in range(3):  # zzz.py's definition is the one the application calls
        files[f"app{i}.py"] = f"def run{i}():\n    return load_settings_b(0)\n"
    config = _index(tmp_path, files)
    found = open_retriever(tmp_path / "repo", config).search("read settings merge defaults", 5)
    paths = [r.chunk.path for r in found]
    assert paths.index("zzz.py") < paths.index("aaa.py")


def test_the_question_path_keeps_a_files_further_chunks_in_its_pool(tmp_path: Path) -> None:
    # The spread is for a list a person reads; the question path reranks its own pool, where
    # the chunks of the file that matches best are the likeliest sources (and search's first
    # results, which the spread brought up: they keep their places in the prompt).
    config = _index(tmp_path, _HEADER_PARSERS)
    retriever = open_retriever(tmp_path / "repo", Config(**{**vars(config), "candidates": 2}))
    question = "how are the header name and value parsed?"
    found = retriever.retrieve(question)
    paths = [r.chunk.path for r in found.candidates]
    assert paths.count("parsing.py") == 2
    shown = {r.chunk.id for r in retriever.search(question, 2)}
    assert shown <= {r.chunk.id for r in found.candidates}


def test_an_identifier_looked_up_ranks_where_it_is_written_even_in_a_test(
    tmp_path: Path,
) -> None:
    # A query of one identifier is a look-up (here a marker a benchmark appends to a saved
    # file): the test holding it verbatim comes before the repository's most central file,
    # whose two chunks only share a part of it ("savedmarkword").
    marker = "savedmarkword{}x17960810179049275{}"
    files = {
        "core.py": f"def split_lines(x):\n    # {marker.format(3, 41)}\n"
        + FILLER
        + f"    return x\n\n\ndef other(y):\n    # {marker.format(4, 42)}\n"
        + FILLER
        + "    return y\n",
        "tests/test_flow.py": "def test_flow():\n    value = compute(1)\n"
        + FILLER
        + f"    assert value\n# {marker.format(6, 99)}\n",
    }
    for i in range(6):
        files[f"user{i}.py"] = (
            f"from core import split_lines, other\n\ndef run{i}():\n"
            "    split_lines(1)\n    other(2)\n"
        )
    config = _index(tmp_path, files)
    found = open_retriever(tmp_path / "repo", config).search(marker.format(6, 99), 5)
    assert found[0].chunk.path == "tests/test_flow.py"
    assert [r.score for r in found] == sorted((r.score for r in found), reverse=True)


def test_a_search_after_a_write_keeps_the_last_prior_while_the_graph_is_read_again() -> None:
    # Reading every chunk's references again takes ~0.5 s on the stdlib: the search right after
    # a save must not wait for it, and the searches after the refresh see the new graph.
    before = [("core.py", ["load"], []), ("app.py", [], ["load"])]
    after = [("core.py", [], ["run"]), ("app.py", ["run"], [])]
    graphs = iter([before, after])
    release = threading.Event()

    def references() -> References:
        rows = next(graphs)
        if rows is after:
            assert release.wait(10)  # the read of the new graph is slow
        return References.of_rows(rows)

    prior = CentralityPrior(references, refresh_seconds=0.0)
    assert prior.at(1)["core.py"] == 1.0
    assert prior.at(2)["core.py"] == 1.0  # at once: the last prior while version 2 is read
    release.set()
    prior.settled(10)
    assert prior.at(2)["app.py"] == 1.0 and prior.at(2)["core.py"] == 0.0


def test_a_burst_of_writes_reads_the_graph_again_at_most_once_a_while() -> None:
    reads: list[int] = []

    def references() -> References:
        reads.append(1)
        return References.of_rows([("core.py", ["load"], []), ("app.py", [], ["load"])])

    prior = CentralityPrior(references, refresh_seconds=3600.0)
    for version in range(1, 20):  # a save, a search, a save, ...
        prior.at(version)
        prior.settled(10)
    assert len(reads) == 1
