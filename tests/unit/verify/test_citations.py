"""Citation resolution after edits: exact, moved, stale, gone."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from codecite_lsp.core.answers import Citation, ClaimSpan, Exact, Gone, Moved, Stale
from codecite_lsp.core.records import outside_source
from codecite_lsp.verify.anchors import resolve
from codecite_lsp.verify.gate import GatePassed, verify
from codecite_lsp.verify.quotes import lines_hash

KEYS = Path(__file__).parents[2] / "fixtures" / "sample_repo" / "keyvault" / "keys.py"
ORIGINAL = KEYS.read_text(encoding="utf-8")
LINES = ORIGINAL.split("\n")[:-1]  # the file ends with a newline


def cited(start: int, end: int, quote: str) -> Citation:
    """A citation as the gate makes it: verified against the whole file as one source."""
    source = outside_source("S1", "keyvault/keys.py", 1, len(LINES), ORIGINAL, revision="r1")
    raw = json.dumps(
        {
            "spans": [
                {
                    "kind": "claim",
                    "text": "c",
                    "citations": [
                        {"source": "S1", "start_line": start, "end_line": end, "quote": quote}
                    ],
                }
            ],
            "refuse": None,
        }
    )
    result = verify(raw, [source])
    assert isinstance(result, GatePassed), result
    span = result.spans[0]
    assert isinstance(span, ClaimSpan)
    return span.citations[0]


RETIRE = cited(53, 54, "old = store.current(client)\n    old.retired_at = now")


def text_of(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def test_unchanged_file_is_exact() -> None:
    assert resolve(RETIRE, ORIGINAL) == Exact(path="keyvault/keys.py", start_line=53, end_line=54)


def test_twenty_lines_inserted_above_is_moved_to_the_new_lines() -> None:
    edited = text_of(["# padding"] * 20 + LINES)
    assert resolve(RETIRE, edited) == Moved(
        path="keyvault/keys.py", start_line=73, end_line=74, old_start_line=53, old_end_line=54
    )


def test_deleted_quoted_lines_are_stale() -> None:
    edited = text_of(LINES[:52] + LINES[54:])
    resolution = resolve(RETIRE, edited)
    assert isinstance(resolution, Stale)
    assert resolution.reason == "the quoted text is no longer in the file"


def test_deleted_file_is_gone() -> None:
    assert resolve(RETIRE, None) == Gone(path="keyvault/keys.py", reason="file deleted")


def test_crlf_conversion_and_trailing_whitespace_keep_it_exact() -> None:
    assert isinstance(resolve(RETIRE, ORIGINAL.replace("\n", "\r\n")), Exact)
    trailing = text_of([line + "   \t" for line in LINES])
    assert isinstance(resolve(RETIRE, trailing), Exact)
    no_final_newline = ORIGINAL.rstrip("\n")
    assert isinstance(resolve(RETIRE, no_final_newline), Exact)


def test_edited_line_inside_the_range_but_quote_still_there_is_exact() -> None:
    wide = cited(52, 56, "old.retired_at = now")
    edited = list(LINES)
    edited[55] = "    store.add(client, fresh)  # keep history"
    assert resolve(wide, text_of(edited)) == Exact(
        path="keyvault/keys.py", start_line=52, end_line=56
    )


def test_block_changed_but_quote_moved_resolves_to_the_quote_lines() -> None:
    wide = cited(52, 56, "old.retired_at = now")
    edited = list(LINES)
    edited[51] = "    now = now or time.time()"  # the block no longer hashes the same
    edited = edited[:45] + ["", "# moved", ""] * 3 + edited[45:]
    resolution = resolve(wide, text_of(edited))
    assert resolution == Moved(
        path="keyvault/keys.py", start_line=63, end_line=63, old_start_line=52, old_end_line=56
    )


def test_several_copies_resolve_to_the_nearest_deterministically() -> None:
    block = LINES[52:54]
    far_copy = ["# copy", *block]
    edited = far_copy + ["x = 1"] * 30 + LINES[:50] + ["# shift"] * 4 + LINES[50:] + far_copy
    resolution = resolve(RETIRE, text_of(edited))
    assert isinstance(resolution, Moved)
    assert (resolution.start_line, resolution.end_line) == (53 + 33 + 4, 54 + 33 + 4)
    assert resolve(RETIRE, text_of(edited)) == resolution


def test_lines_hash_ignores_line_endings_and_trailing_spaces() -> None:
    assert lines_hash(["a", "b"]) == lines_hash(["a  ", "b\t"])
    assert lines_hash(["a", "b"]) != lines_hash(["a", " b"])


@given(st.integers(0, 200), st.integers(0, 200))
def test_any_insertion_above_moves_by_exactly_that_many_lines(above: int, below: int) -> None:
    edited = text_of([f"# new {i}" for i in range(above)] + LINES + ["# tail"] * below)
    resolution = resolve(RETIRE, edited)
    if above == 0:
        assert isinstance(resolution, Exact)
    else:
        assert isinstance(resolution, Moved)
        assert (resolution.start_line, resolution.end_line) == (53 + above, 54 + above)
