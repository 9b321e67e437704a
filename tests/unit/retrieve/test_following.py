"""Retrieval follows the code (real tree-sitter chunks in real LanceDB): code ranks above the
doc describing it, a question naming a function brings its definition from another file, a
chunk cut from a long definition is shown with its signature."""

from __future__ import annotations

from pathlib import Path

from codecite_lsp.core.config import Config
from codecite_lsp.index.indexer import Indexer
from codecite_lsp.retrieve.retriever import open_retriever


def indexed(tmp_path: Path, files: dict[str, str]) -> Config:
    repo = tmp_path / "repo"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    config = Config(embedding="none", index_dir=str(tmp_path / "idx"))
    Indexer(repo, config).run()
    return config


def test_the_code_ranks_above_the_doc_that_describes_it(tmp_path: Path) -> None:
    # The guide says the question's words more often than the code: only code-first puts the
    # code ahead of it, for search and for the question path.
    config = indexed(
        tmp_path,
        {
            "docs/retries.md": "# Retries\n\nThe client retries failed requests. Failed requests"
            " are retried with backoff: each retry of a failed request waits longer.\n",
            "src/client.py": "def send(request, retries=3):\n    for attempt in range(retries):\n"
            "        if request.ok():\n            return request\n"
            "        sleep(2 ** attempt)  # a failed request waits longer\n",
        },
    )
    retriever = open_retriever(tmp_path / "repo", config)
    question = "How does the client retry failed requests?"
    assert retriever.search(question)[0].chunk.path == "src/client.py"
    assert retriever.retrieve(question).selected[0].chunk.path == "src/client.py"
    asked = retriever.search("Where do the docs describe how failed requests are retried?")
    assert asked[0].chunk.path == "docs/retries.md"


def test_a_question_naming_a_function_brings_its_definition_from_another_file(
    tmp_path: Path,
) -> None:
    # Forty callers say compute_backoff more often than its one definition: by keyword rank the
    # definition falls behind them; the index knows which chunk defines it.
    files = {
        f"jobs/job{n}.py": f"def run_{n}(attempt):\n    delay = compute_backoff(attempt)\n"
        f"    delay = compute_backoff(attempt + delay)\n    return compute_backoff(delay)\n"
        for n in range(40)
    }
    files["policy/timing.py"] = (
        "import random\n\n\ndef compute_backoff(attempt):\n"
        "    return min(60, 2 ** attempt) * random.uniform(0.5, 1.5)\n"
    )
    config = indexed(tmp_path, files)
    retriever = open_retriever(tmp_path / "repo", config)
    top = retriever.search("what does compute_backoff do?", limit=3)
    assert top[0].chunk.path == "policy/timing.py"
    sources = retriever.retrieve("what does compute_backoff do?").selected
    assert "policy/timing.py" in [s.chunk.path for s in sources]


def test_a_chunk_cut_from_a_long_method_is_shown_with_its_signature(tmp_path: Path) -> None:
    body = "".join(f"        step_{n} = prepare(value, {n})\n" for n in range(60))
    source = (
        "class Parameter:\n    '''A parameter.'''\n\n"
        "    def consume_value(\n        self, ctx, opts\n    ):\n" + body
        + "        sentinel = lookup_default_source(ctx)\n        return sentinel\n"
    )  # fmt: skip
    config = indexed(tmp_path, {"core.py": source})
    retriever = open_retriever(tmp_path / "repo", config)
    sources = retriever.retrieve("where does lookup_default_source get called?").selected
    lines = {
        n: line
        for s in sources
        if s.chunk.path == "core.py"
        for n, line in enumerate(s.chunk.text.splitlines(), start=s.chunk.start_line)
    }
    assert any("lookup_default_source" in line for line in lines.values())
    assert lines.get(4) == "    def consume_value("  # the signature, at its true line numbers
    assert lines.get(6) == "    ):"
    assert lines.get(1) == "class Parameter:"  # and the enclosing class


def test_an_identifier_typed_verbatim_finds_the_test_that_alone_holds_it(tmp_path: Path) -> None:
    # Code first must not hide the one place a typed name lives: the test holding
    # `marker_0x17` verbatim comes before code that only shares its parts.
    config = indexed(
        tmp_path,
        {
            "tests/test_tools.py": "def test_reindent():\n    assert run() == 1  # marker_0x17\n",
            "tools.py": "def run():\n    return 1  # marker_0x18 marker 0x17 marker\n",
        },
    )
    results = open_retriever(tmp_path / "repo", config).search("marker_0x17")
    assert results[0].chunk.path == "tests/test_tools.py"


def test_the_question_path_brings_the_definitions_the_best_chunk_calls(tmp_path: Path) -> None:
    # The question names handle_upload; the parsing it asks about happens in parse_multipart,
    # defined in another file that sixty noisier files outrank by keyword (and by keyword with
    # the reference graph's prior, which lifts it as the one definition something calls).
    files = {
        f"noise/n{n}.py": f"def noise_{n}(request):\n    # parse the request, parse request\n"
        f"    return request.parse(request)\n"
        for n in range(60)
    }
    files["service.py"] = (
        "def handle_upload(request):\n    data = parse_multipart(request.body)\n"
        "    return store_blob(data)\n"
    )
    files["wire/multipart.py"] = (
        "def parse_multipart(body):\n    boundary = body.split(b'\\r\\n', 1)[0]\n"
        "    return [part for part in body.split(boundary) if part]\n"
    )
    config = indexed(tmp_path, files)
    retriever = open_retriever(tmp_path / "repo", config)
    question = "How does handle_upload parse the request?"
    assert "wire/multipart.py" not in [r.chunk.path for r in retriever.search(question, limit=30)]
    found = retriever.retrieve(question)
    assert "wire/multipart.py" in [s.chunk.path for s in found.selected]
