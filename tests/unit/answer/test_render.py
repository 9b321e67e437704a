"""How a verified quote is shown in the terminal and in hovers: as the code reads."""

from __future__ import annotations

from pathlib import Path

from codecite_lsp.answer.render import answer_to_text
from codecite_lsp.cli.ask import first_indent
from codecite_lsp.core.answers import Answered, Citation, ClaimSpan


def shown(quote: str) -> list[str]:
    citation = Citation(
        path="a.py", start_line=3, end_line=5, quote=quote, content_hash="h", revision="r"
    )
    answer = Answered(trace_id="t", spans=[ClaimSpan(text="Claim.", citations=[citation])])
    return [line[6:] for line in answer_to_text(answer).splitlines()[2:]]


def test_lines_under_a_quote_that_starts_mid_indentation_sit_under_its_first_line() -> None:
    quote = "needle = normalise(quote)\n        if not needle:\n            return empty()"
    assert shown(quote) == ["needle = normalise(quote)", "if not needle:", "    return empty()"]


def test_a_block_opened_by_the_first_line_stays_nested() -> None:
    quote = (
        "if prefix(quote):\n            return result(\n                'numbers',\n            )"
    )
    assert shown(quote) == [
        "if prefix(quote):",
        "    return result(",
        "        'numbers',",
        "    )",
    ]


def test_a_closing_bracket_returns_to_the_first_lines_indentation() -> None:
    quote = "verdict = check(\n        path, start, end\n    )"
    assert shown(quote) == ["verdict = check(", "    path, start, end", ")"]


def test_a_quote_whose_lines_are_already_aligned_is_left_alone() -> None:
    assert shown("a = 1\nb = 2") == ["a = 1", "b = 2"]
    assert shown("    a = 1\n    b = 2") == ["    a = 1", "    b = 2"]


def test_an_else_clause_returns_to_the_first_lines_indentation() -> None:
    quote = "if ready:\n            go()\n        else:\n            wait()"
    assert shown(quote) == ["if ready:", "    go()", "else:", "    wait()"]


def test_a_first_line_deeper_than_the_next_keeps_its_depth_when_the_file_says_it() -> None:
    # `return x` sat 12 deep, the `else:` after it 8: no guess from the quote alone gets this.
    quote = "return x\n        else:\n            return y"
    citation = Citation(
        path="a.py", start_line=3, end_line=5, quote=quote, content_hash="h", revision="r"
    )
    answer = Answered(trace_id="t", spans=[ClaimSpan(text="Claim.", citations=[citation])])
    text = answer_to_text(answer, lambda cited: " " * 12 if cited is citation else None)
    assert [line[6:] for line in text.splitlines()[2:]] == [
        "    return x",
        "else:",
        "    return y",
    ]


def test_the_command_line_reads_the_first_lines_indentation_from_the_working_tree(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text(
        "def f(x):\n    if x:\n        return x\n    else:\n        return -x\n", encoding="utf-8"
    )
    indent = first_indent(tmp_path)

    def cited(line: int, quote: str) -> Citation:
        return Citation(path="a.py", start_line=line, end_line=line, quote=quote,
                        content_hash="h", revision="r")  # fmt: skip

    assert indent(cited(3, "return x\n    else:")) == " " * 8
    assert indent(cited(3, "x")) is None  # the quote starts mid-line: nothing to give back
    assert indent(Citation(**{**cited(3, "return x").model_dump(), "path": "gone.py"})) is None
