"""Hybrid retrieval: fusion, de-duplication, merging, the relevance floor, symbol seeding and
``codecite search --json`` on the sample repository (real tree-sitter chunks in real LanceDB)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsp_helpers import FIXTURE as SAMPLE
from record_helpers import result as make

from codecite_lsp.core.config import Config
from codecite_lsp.core.records import Result, content_hash
from codecite_lsp.index.static_embedding import StaticEmbedder
from codecite_lsp.retrieve.candidates import RetrievalContext
from codecite_lsp.retrieve.retriever import Retriever, open_retriever
from codecite_lsp.retrieve.scoring import rrf, search_depth
from codecite_lsp.retrieve.selection import dedup_overlapping, merge_adjacent


def result(path: str, start: int, end: int, text: str = "", score: float = 0.5) -> Result:
    text = text or "".join(f"line {n}\n" for n in range(start, end + 1))
    return make(path, start, end, text, score, content_hash=content_hash(text), revision="r1")


@pytest.fixture(scope="module")
def sample_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample repository, copied and indexed once (too small for vectors: keyword only)."""
    from codecite_lsp.index.indexer import Indexer

    repo = tmp_path_factory.mktemp("sample") / "repo"
    shutil.copytree(SAMPLE, repo)
    Indexer(repo, Config()).run()
    return repo


TOPICS = [
    "def rotate_{i}(store, client):\n    old = store.current(client)\n    old.retired = True\n",
    "def sign_{i}(secret, payload):\n    return hmac_digest(secret, payload, session_token)\n",
    "def refill_{i}(bucket, elapsed):\n    bucket.tokens += elapsed * bucket.rate\n",
    "def connect_{i}(host, port):\n    sock = socket_open(host, port)\n    return sock\n",
]


@pytest.fixture(scope="module")
def grown_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample repository plus 120 small modules: big enough for the default vectors."""
    from codecite_lsp.index.indexer import Indexer

    repo = tmp_path_factory.mktemp("grown") / "repo"
    shutil.copytree(SAMPLE, repo)
    (repo / "gen").mkdir()
    for i in range(120):
        body = TOPICS[i % 4].format(i=i) + "\n\n" + TOPICS[(i + 1) % 4].format(i=i)
        (repo / "gen" / f"mod{i}.py").write_text(body)
    # Similar to a query for refill_6 on both sides (many "refill"s), yet not holding it.
    (repo / "gen" / "refills.py").write_text(
        "def refill_all(buckets):\n    # refill, refill, refill: refill every bucket\n"
        "    for bucket in buckets:\n        refill(bucket)\n"
    )
    Indexer(repo, Config()).run()
    return repo


@pytest.fixture(scope="module")
def retriever(sample_repo: Path) -> Retriever:
    return open_retriever(sample_repo, Config())


# -- pure parts --------------------------------------------------------------------------------


def test_rrf_prefers_agreement_then_rank() -> None:
    scores = rrf([["a", "b", "c"], ["c", "b", "d"]])
    order = sorted(scores, key=lambda k: -scores[k])
    assert set(order[:2]) == {"b", "c"}  # agreement of both lists beats one first place
    assert scores["c"] == pytest.approx(1 / 61 + 1 / 63)
    assert scores["a"] > scores["d"]  # first in one list beats third in one list
    assert scores["b"] == pytest.approx(2 / 62)


def test_overlapping_results_keep_the_best_one() -> None:
    best, overlapping, other_file, after = (
        result("a.py", 10, 20),
        result("a.py", 15, 30),
        result("b.py", 15, 30),
        result("a.py", 21, 25),
    )
    assert dedup_overlapping([best, overlapping, other_file, after]) == [best, other_file, after]


def test_adjacent_and_overlapping_chunks_of_one_file_merge_into_its_exact_lines() -> None:
    file_lines = [f"line {n}\n" for n in range(1, 41)]

    def lines(start: int, end: int) -> str:
        return "".join(file_lines[start - 1 : end])

    top = result("a.py", 11, 20, lines(11, 20), score=0.9)
    other = result("b.py", 1, 5, lines(1, 5), score=0.8)
    adjacent = result("a.py", 1, 10, lines(1, 10), score=0.7)
    overlapping = result("a.py", 18, 25, lines(18, 25), score=0.6)
    apart = result("a.py", 30, 35, lines(30, 35), score=0.5)
    merged = merge_adjacent([top, other, adjacent, overlapping, apart])
    assert [(m.chunk.path, m.chunk.start_line, m.chunk.end_line) for m in merged] == [
        ("a.py", 1, 25),
        ("b.py", 1, 5),
        ("a.py", 30, 35),
    ]
    assert merged[0].chunk.text == lines(1, 25)
    assert merged[0].chunk.content_hash == content_hash(lines(1, 25))
    assert merged[0].score == 0.9


def test_chunks_of_different_revisions_are_not_merged() -> None:
    old = make("a.py", 1, 5, "", 0.5, content_hash=content_hash(""), revision="old")
    assert len(merge_adjacent([old, result("a.py", 6, 9)])) == 2


# -- on the indexed sample repository ---------------------------------------------------------


def test_empty_query_gives_nothing(retriever: Retriever) -> None:
    assert retriever.search("") == []
    assert retriever.search("   \n\t") == []


def test_search_is_best_first_and_scores_are_in_range(retriever: Retriever) -> None:
    assert (
        retriever.search("refill_per_second elapsed", limit=3)[0].chunk.path
        == "keyvault/ratelimit.py"
    )
    results = retriever.search("rotate_key", limit=5)
    assert {"keyvault/keys.py", "keyvault/__init__.py"} <= {r.chunk.path for r in results}
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    assert all(0 < s <= 1 for s in scores)
    spans = [(r.chunk.path, r.chunk.start_line, r.chunk.end_line) for r in results]
    for i, (path, start, end) in enumerate(spans):
        for other_path, other_start, other_end in spans[i + 1 :]:
            assert path != other_path or end < other_start or other_end < start


def test_a_tiny_repository_is_searched_by_keyword_only(retriever: Retriever) -> None:
    assert isinstance(retriever.embedder, StaticEmbedder)
    assert retriever.embedder.model is None  # 8 chunks: no vectors trained
    assert retriever.search("token bucket refill", limit=3)[0].score == pytest.approx(1.0)


def test_search_is_hybrid_once_vectors_exist(grown_repo: Path) -> None:
    hybrid = open_retriever(grown_repo, Config())
    embedder = hybrid.embedder
    assert isinstance(embedder, StaticEmbedder) and embedder.model is not None
    assert hybrid.store.vector_count(embedder.name) == hybrid.store.chunk_count()
    keyword_only = open_retriever(grown_repo, Config(embedding="none"))
    query = "retired client key"
    depth = search_depth(10)  # the depth it fuses
    keyword = {c.path for c, _ in hybrid.store.keyword_search(query, depth)}
    vector = embedder.embed([query])[0]
    nearest = {c.path for c, _ in hybrid.store.vector_search(embedder.name, vector, depth)}
    fused = hybrid.search(query, limit=10)
    assert {r.chunk.path for r in fused} <= keyword | nearest
    assert [r.score for r in fused] == sorted((r.score for r in fused), reverse=True)
    assert all(0 < r.score <= 1 for r in fused)
    # A word in another inflection than the code's reaches it by keyword alone: "refilling"
    # is looked up as "refill" too (the vectors need not rescue it).
    assert keyword_only.search("refilling")[0].chunk.path == "gen/refills.py"


@pytest.mark.parametrize("query", ["((((", "ünïcødé 模块 🚀", "quasar nebula"])
def test_a_query_matching_nothing_finds_nothing_rather_than_a_perfect_score(
    grown_repo: Path, query: str
) -> None:
    # No word of the index (nothing to embed, or only words no chunk is near): no keyword hit and
    # no vector close enough, so no result at all instead of a weak one normalised to 1.0.
    assert open_retriever(grown_repo, Config()).search(query) == []


def test_an_identifier_typed_verbatim_wins_over_similar_chunks(grown_repo: Path) -> None:
    hybrid = open_retriever(grown_repo, Config())
    for name, path in [("refill_6", "gen/mod6.py"), ("refill_5", "gen/mod5.py")]:
        results = hybrid.search(name, limit=5)
        assert results[0].chunk.path == path
        assert all(name not in r.chunk.text for r in results[1:])


def test_search_works_keyword_only(sample_repo: Path) -> None:
    keyword_only = open_retriever(sample_repo, Config(embedding="none"))
    results = keyword_only.search("token bucket refill", limit=3)
    assert results[0].chunk.path == "keyvault/ratelimit.py"
    assert results[0].score == pytest.approx(1.0)  # first in the only ranking that ran


def test_a_question_the_repository_answers_clears_the_floor(retriever: Retriever) -> None:
    retrieval = retriever.retrieve("how are API keys rotated?")
    assert retrieval.cleared_floor
    assert retrieval.selected[0].chunk.path in {"keyvault/keys.py", "docs/operations.md"}
    assert any("def rotate_key" in r.chunk.text for r in retrieval.selected)
    config = retriever.config
    assert len(retrieval.selected) <= config.context_chunks
    assert sum(len(r.chunk.text) for r in retrieval.selected) <= config.context_tokens * 4
    assert all(r.score >= config.relevance_floor for r in retrieval.selected)


def test_a_question_about_absent_things_does_not_clear_the_floor(retriever: Retriever) -> None:
    retrieval = retriever.retrieve("how does the flux capacitor calibrate warp coils?")
    assert not retrieval.cleared_floor
    assert retrieval.selected == []
    assert retrieval.candidates  # still listed, for the refusal's "retrieved"
    assert all(r.score < retriever.config.relevance_floor for r in retrieval.candidates)


def test_stop_words_are_not_evidence(retriever: Retriever) -> None:
    retrieval = retriever.retrieve("what is the way that it does this for them?")
    assert not retrieval.cleared_floor


def test_context_boosts_the_current_file(retriever: Retriever) -> None:
    question = "where are tokens used?"  # several files are equally relevant
    plain = retriever.retrieve(question).candidates
    tied = [r.chunk.path for r in plain if r.score >= plain[0].score - 0.05]
    assert len(set(tied)) >= 2
    # The runner-up file (in the order the question path gives, with or without the MiniLM
    # rerank) is brought first by being the file open in the editor.
    runner_up = next(path for path in tied if path != plain[0].chunk.path)
    here = retriever.retrieve(question, RetrievalContext(path=runner_up))
    assert here.candidates[0].chunk.path == runner_up
    # The boost reorders; it is not evidence: relevance is the same with or without it.
    assert {r.chunk.path: r.score for r in here.candidates} == {
        r.chunk.path: r.score for r in retriever.retrieve(question).candidates
    }


def test_symbol_seeding_returns_definition_then_uses(retriever: Retriever) -> None:
    seeded = retriever.retrieve_for_symbol("rotate_key", "keyvault/keys.py")
    assert seeded.candidates[0].chunk.path == "keyvault/keys.py"
    assert "def rotate_key" in seeded.candidates[0].chunk.text
    use_paths = {r.chunk.path for r in seeded.candidates[1:]}
    assert "keyvault/__init__.py" in use_paths
    assert retriever.retrieve_for_symbol("  ").candidates == []


@pytest.mark.parametrize(
    "query",
    ["x' OR '1'='1", 'path = "a"; DROP TABLE chunks', "é🙂 ünïcode", "(((", "rotate " * 5000],
)
def test_odd_queries_neither_crash_nor_leak_secrets(retriever: Retriever, query: str) -> None:
    found = retriever.search(query, limit=5)
    asked = retriever.retrieve(query)
    paths = {r.chunk.path for r in [*found, *asked.candidates]}
    assert ".env" not in paths
    assert all(0 <= r.score <= 1 for r in [*found, *asked.candidates])


def test_a_question_in_other_words_than_the_code_still_ranks_the_function_it_names(
    tmp_path: Path,
) -> None:
    # "times out" is said "timeout" in code: the chunk of wait_for covers every question term and
    # comes before one that merely says "wait" and "time" literally.
    from codecite_lsp.index.indexer import Indexer

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "tasks.py").write_text(
        "async def wait_for(fut, timeout):\n"
        '    """When a timeout occurs, it cancels the task and raises TimeoutError."""\n'
        "    return await shield(fut)\n"
    )
    (repo / "events.py").write_text(
        "def handshake(self):\n"
        '    """The time in seconds a server will wait for the handshake to complete."""\n'
        "    return self.wait_time\n"
    )
    Indexer(repo, Config()).run()
    retrieval = open_retriever(repo, Config()).retrieve("What happens when wait_for times out?")
    assert retrieval.candidates[0].chunk.path == "tasks.py"
    assert retrieval.candidates[0].score >= 0.75  # every question term covered


def test_tests_come_after_the_code_unless_the_question_is_about_tests(tmp_path: Path) -> None:
    from codecite_lsp.index.indexer import Indexer

    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    # The test says the question's words more often than the code does: only the penalty can
    # put the code first.
    (repo / "tests" / "test_refund.py").write_text(
        "def test_refund_order_refund_amount():\n"
        "    '''Refund an order: the refund amount is the order total.'''\n"
        "    assert refund_order(order(10)) == 10  # refund amount of the order\n"
    )
    (repo / "billing.py").write_text(
        "def refund_order(order):\n"
        "    '''Refund an order: the amount returned is its total.'''\n"
        "    return order.total\n"
    )
    config = Config(embedding="none", index_dir=str(tmp_path / "idx"))
    Indexer(repo, config).run()
    retriever = open_retriever(repo, config)
    about_code = retriever.retrieve("how is an order refund amount computed?")
    assert about_code.candidates[0].chunk.path == "billing.py"
    about_tests = retriever.retrieve("which test checks the order refund amount?")
    assert about_tests.candidates[0].chunk.path == "tests/test_refund.py"


def test_hover_seeding_lists_uses_in_code_before_uses_in_tests(tmp_path: Path) -> None:
    from codecite_lsp.index.indexer import Indexer

    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "billing.py").write_text("def refund_order(order):\n    return order.total\n")
    for n in range(3):  # tests mention it most, so keyword rank alone would put them first
        (repo / "tests" / f"test_refund{n}.py").write_text(
            "def test_it():\n    assert refund_order(o) == refund_order(o) == refund_order(o)\n"
        )
    (repo / "shop.py").write_text("def checkout(order):\n    return refund_order(order)\n")
    config = Config(embedding="none", index_dir=str(tmp_path / "idx"))
    Indexer(repo, config).run()
    found = open_retriever(repo, config).retrieve_for_symbol("refund_order", "billing.py")
    paths = [r.chunk.path for r in found.candidates]
    assert paths[:2] == ["billing.py", "shop.py"]
    assert set(paths[2:]) == {f"tests/test_refund{n}.py" for n in range(3)}


def test_hover_seeding_takes_a_module_level_var_as_the_definition_and_an_import_as_a_use(
    tmp_path: Path,
) -> None:
    from codecite_lsp.index.indexer import Indexer

    repo = tmp_path / "repo"
    (repo / "lib").mkdir(parents=True)
    (repo / "lib" / "response.js").write_text(
        "var http = require('http');\n\nvar res = Object.create(http.ServerResponse.prototype)\n"
        "\nmodule.exports = res\n"
    )
    for n in range(4):  # more mentions of `res`, and a local of that name, elsewhere
        (repo / "lib" / f"send{n}.js").write_text(
            f"exports.send{n} = function (body) {{\n  var res = this.res;\n"
            "  res.write(body);\n  res.end(res.body);\n};\n"
        )
    (repo / "app.js").write_text("var res = require('./lib/response');\n\nres.send('ok');\n")
    config = Config(embedding="none", index_dir=str(tmp_path / "idx"))
    Indexer(repo, config).run()
    found = open_retriever(repo, config).retrieve_for_symbol("res", "app.js")
    assert found.candidates[0].chunk.path == "lib/response.js"


def test_in_process_results_keep_what_benchmark_harnesses_read(retriever: Retriever) -> None:
    # The shared harnesses (semble-dev's run.py) read r.to_json()["path"], r.start_line and
    # r.end_line from search in process: docs/contracts.md.
    results = retriever.search("rotate keys", limit=3)
    assert results
    for r in results:
        wire = r.to_json()
        assert (wire["path"], wire["start_line"], wire["end_line"]) == (
            r.chunk.path,
            r.start_line,
            r.end_line,
        )
