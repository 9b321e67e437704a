"""Choosing the prompt's sources (pure): merged neighbours count once, code first with a small
quota of other files, long merged sources cut around their best chunk with true line numbers."""

from __future__ import annotations

from record_helpers import result as make

from codecite_lsp.core.records import Result, content_hash
from codecite_lsp.core.terms import word_parts
from codecite_lsp.retrieve.selection import (
    MAX_SOURCE_LINES,
    Selection,
    cut_to_terms,
    left_out_of,
    line_range,
    select_sources,
)


def result(path: str, start: int, end: int, score: float = 0.9, word: str = "line") -> Result:
    text = "".join(f"{word} {n}\n" for n in range(start, end + 1))
    return make(path, start, end, text, score, content_hash=content_hash(text), revision="r1")


def selection(
    candidates: list[Result],
    max_sources: int = 8,
    asked: frozenset[str] = frozenset(),
    kept: list[Result] | None = None,
    token_budget: int = 6000,
) -> Selection:
    return select_sources(
        candidates,
        max_sources=max_sources,
        token_budget=token_budget,
        floor=0.25,
        asked=asked,
        terms=["line"],
        headers_for=lambda _: [],
        kept=kept or [],
    )


def select(
    candidates: list[Result], max_sources: int = 8, asked: frozenset[str] = frozenset()
) -> list[Result]:
    return selection(candidates, max_sources, asked).sources


def _places(sources: list[Result]) -> list[tuple[str, int, int]]:
    return [(s.chunk.path, s.chunk.start_line, s.chunk.end_line) for s in sources]


def test_searchs_first_results_keep_their_places_and_the_prompts_order() -> None:
    # Search listed `core.py` first; the rerank put four chunks of other files above it, which
    # fill the two places without it. It keeps one: the better-reranked take what is left, and
    # the sources stay in the rerank's order.
    better = [result(f"src/m{n}.py", 1, 5) for n in range(4)]
    listed = result("src/core.py", 100, 120)
    chosen = selection([*better, listed], max_sources=2, kept=[listed])
    assert _places(chosen.sources) == [("src/m0.py", 1, 5), ("src/core.py", 100, 120)]
    assert chosen.left_out == {c.chunk.id: "source_cap" for c in better[1:]}
    without = selection([*better, listed], max_sources=2)
    assert listed.chunk.id in without.left_out


def test_a_kept_result_is_still_left_out_by_the_floor_and_each_rule_is_named() -> None:
    weak = result("src/weak.py", 1, 5, score=0.1)
    docs = [result(f"docs/page{n}.md", 1, 5) for n in range(3)]
    huge = result("src/huge.py", 1, 1, word="x" * 9000)  # one line over the whole budget
    code = result("src/core.py", 1, 5)
    chosen = selection([weak, *docs, huge, code], kept=[weak], token_budget=2000)
    assert chosen.left_out == {
        weak.chunk.id: "floor",
        docs[2].chunk.id: "non_code_quota",
        huge.chunk.id: "token_budget",
    }
    assert ("src/core.py", 1, 5) in _places(chosen.sources)


def test_left_out_of_names_the_rule_for_each_of_searchs_first_not_wholly_shown() -> None:
    shown = result("src/a.py", 1, 5)
    cut = result("src/b.py", 1, 200)
    gone = result("src/c.py", 1, 5)
    dropped = result("src/d.py", 1, 5)
    floored = result("src/e.py", 1, 5)
    made = Selection([shown, line_range(cut, 1, 120)], {floored.chunk.id: "floor"})
    first = [shown, cut, gone, dropped, floored]
    found = left_out_of(first, made, made.sources, gone=["src/c.py"])
    assert [(left.rank, left.rule) for left in found] == [
        (2, "source_lines"),
        (3, "changed_on_disk"),
        (4, "duplicate_span"),
        (5, "floor"),
    ]


def test_neighbours_merged_into_one_source_count_once_against_the_cap() -> None:
    # Three adjacent chunks of one file would take three of two slots if counted before
    # merging; merged they are one source, and the file ranked after them still gets a slot.
    pages = [result("src/app.py", start, start + 9) for start in (1, 11, 21)]
    code = result("src/core.py", 100, 120)
    chosen = select([*pages, code], max_sources=2)
    assert [(s.chunk.path, s.chunk.start_line, s.chunk.end_line) for s in chosen] == [
        ("src/app.py", 1, 30),
        ("src/core.py", 100, 120),
    ]


def test_non_code_sources_are_limited_unless_the_question_asks_for_them() -> None:
    docs = [result(f"docs/page{n}.md", 1, 5) for n in range(4)]
    code = result("src/core.py", 1, 5, score=0.5)
    chosen = [s.chunk.path for s in select([*docs, code])]
    assert chosen == ["docs/page0.md", "docs/page1.md", "src/core.py"]
    asked = [s.chunk.path for s in select([*docs, code], asked=frozenset({"doc"}))]
    assert asked == [*(f"docs/page{n}.md" for n in range(4)), "src/core.py"]


def test_neighbours_merge_only_up_to_the_longest_source_so_no_chosen_chunk_is_cut_away() -> None:
    best = result("src/loaders.py", 150, 200)
    before = result("src/loaders.py", 90, 149)
    after = result("src/loaders.py", 201, 300)
    chosen = [(s.chunk.start_line, s.chunk.end_line) for s in select([best, before, after])]
    assert chosen == [(90, 200), (201, 300)]  # 111 lines merge; 211 would not


def test_a_source_longer_than_the_limit_is_cut_with_true_line_numbers() -> None:
    long = result("docs/list.md", 1, 300)
    (source,) = select([long], asked=frozenset({"doc"}))
    assert (source.chunk.start_line, source.chunk.end_line) == (1, MAX_SOURCE_LINES)
    assert source.chunk.text.splitlines()[-1] == f"line {MAX_SOURCE_LINES}"  # numbers kept true


def test_the_cut_keeps_the_window_with_the_most_question_words() -> None:
    text = "".join("noise\n" if not 140 <= n <= 150 else "retry backoff\n" for n in range(1, 201))
    long = make("src/x.py", 1, 200, text, 0.9, content_hash=content_hash(text), revision="r1")
    cut = cut_to_terms(long, word_parts("retry"))  # the question's words, as retrieval gives them
    assert cut.chunk.start_line <= 140 and cut.chunk.end_line >= 150
    assert cut.chunk.text.splitlines()[140 - cut.chunk.start_line] == "retry backoff"


def test_a_source_over_the_whole_token_budget_is_never_sent_even_ranked_first() -> None:
    # A kept file may hold one very long line (a 40,000-character inlined image): lines are
    # never cut, so its chunk would be a prompt of its own.
    text = "line " + "QUJD" * 10_000 + "\n"
    huge = make("lib/endpoint.ex", 5, 5, text, 0.9, content_hash=content_hash(text), revision="r1")
    code = result("lib/endpoint.ex", 7, 9, score=0.5)
    assert [(s.chunk.start_line, s.chunk.end_line) for s in select([huge, code])] == [(7, 9)]
