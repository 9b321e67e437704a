"""Which of a file's definitions a question names (pure: ``NameMatch``, ``Compounds``) and what
the question path does with it: the named definition first among its file's chunks, and brought
into the candidates when the keyword search missed it (real tree-sitter chunks in real LanceDB,
keyword only so the rules alone decide)."""

from __future__ import annotations

from pathlib import Path

from codecite_lsp.core.config import Config
from codecite_lsp.core.terms import word_parts
from codecite_lsp.retrieve.names import Compounds, NameMatch, qualifiers
from codecite_lsp.retrieve.retriever import Retriever, open_retriever

NO_VOCABULARY = Compounds(lambda word: False)


def terms(question: str) -> dict[str, float]:
    return dict.fromkeys(word_parts(question), 1.0)


def test_a_definition_named_by_the_question_scores_and_a_short_name_beats_a_long_one() -> None:
    asked = terms("Merge multiple sorted inputs into a single sorted output.")
    merge = NameMatch(asked, NO_VOCABULARY)(("merge",))
    longer = NameMatch(asked, NO_VOCABULARY)(("merge_lazily_in_place",))
    assert merge > longer > 0.0
    assert NameMatch(asked, NO_VOCABULARY)(("heappush", "heapify")) == 0.0
    # the best of a chunk's definitions counts
    assert NameMatch(asked, NO_VOCABULARY)(("heappush", "merge")) == merge


def test_a_lower_case_compound_is_split_into_words_the_corpus_knows() -> None:
    known = Compounds({"split", "ext", "tar", "open", "taropen", "key", "re", "set"}.__contains__)
    assert known("splitext") == ["split", "ext"]
    assert known("taropen") == ["tar", "open"]  # known whole, and still a compound
    assert known("fromkeys") == ["from", "key"]  # a function word may be a piece
    assert known("reset") == ["reset"]  # a piece has 3+ letters unless a function word
    assert known("zzyzx") == ["zzyzx"]
    asked = terms("Create a new dictionary with keys from an iterable.")
    assert NameMatch(asked, known)(("fromkeys",)) > 0.0
    assert NameMatch(asked, NO_VOCABULARY)(("fromkeys",)) == 0.0


def test_the_qualifiers_of_a_dotted_name_are_not_what_is_asked_about() -> None:
    # the question path's name rule leaves their words out (test_followup's Session.send: the
    # definitions named "session" must not crowd out Session.request, which calls send)
    assert qualifiers("Where is Session.send called from os.path.join?") == {
        "Session",
        "os",
        "path",
    }
    assert qualifiers("how are sessions sent?") == set()


STORE = """class Store:
    def flush(self):
        # write pending changes to the disk
        self._file.write(self._pending)

    def close(self):
        # write pending changes to the disk, flush them, then close the disk file: every
        # pending change on the disk is flushed, no pending change is lost, the disk is synced
        self.flush()
        self._pending.clear()
        self._file.close()
"""

RUNS = """def merge_runs(first, second):
    out = []
    while first and second:
        out.append(first.pop(0) if first[0] <= second[0] else second.pop(0))
    return out + first + second


def galloping_search(seq, value, start):
    step = 1
    while start + step < len(seq) and seq[start + step] < value:
        step *= 2
    return min(start + step, len(seq))


def mergeable(first, second):
    return bool(first) and bool(second) and first[-1] <= second[0]
"""


def _retriever(tmp_path: Path, files: dict[str, str]) -> Retriever:
    from codecite_lsp.index.indexer import Indexer

    repo = tmp_path / "repo"
    repo.mkdir()
    for name, text in files.items():
        (repo / name).write_text(text)
    # Word evidence only: these tests isolate the name rule from what vectors would find.
    config = Config(
        embedding="none", meaning="none", index_dir=str(tmp_path / "idx"), chunk_budget=200
    )
    Indexer(repo, config).run()
    return open_retriever(repo, config)


def test_the_definition_a_question_names_comes_before_a_chunk_that_merely_says_its_words(
    tmp_path: Path,
) -> None:
    # close() says every word of the question, flush() among them; flush() is what is asked
    # (in another form than its name: "flush" alone already brings `def flush` in the search).
    retriever = _retriever(tmp_path, {"store.py": STORE})
    first = retriever.retrieve("Flushes pending changes to the disk.").candidates[0]
    assert "def flush" in first.chunk.text
    assert "def close" not in first.chunk.text


def test_a_named_definition_the_search_missed_joins_the_candidates(tmp_path: Path) -> None:
    # `mergeable` holds no word of the question (the keyword index has it as one word), nor is
    # it beside the file's best chunk: only its name brings it.
    retriever = _retriever(tmp_path, {"sorting.py": RUNS})
    assert "mergeable" not in {r.chunk.symbol for r in retriever.search("when can runs merge", 30)}
    symbols = [r.chunk.symbol for r in retriever.retrieve("when can runs merge").candidates]
    assert "mergeable" in symbols
