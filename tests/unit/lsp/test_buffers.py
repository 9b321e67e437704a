"""An open buffer's line table gives the same text as editing the whole string would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from codecite_lsp.lsp.buffers import Buffer, split_lines

TEXT = st.lists(st.sampled_from(["a", "é", "😀", "\n", "\r", "\r\n", " "]), max_size=20).map(
    "".join
)


def utf16_offset(text: str, line: int, character: int) -> int:
    """The string offset of an LSP position, the slow and obvious way."""
    lines = split_lines(text)
    if line >= len(lines):
        return len(text)
    start = sum(len(item) for item in lines[:line])
    content = lines[line].rstrip("\r\n")
    units = 0
    for index, char in enumerate(content):
        if units >= character:
            return start + index
        units += 2 if ord(char) > 0xFFFF else 1
    return start + len(content)


@settings(max_examples=400, deadline=None)
@given(
    TEXT,
    st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8), st.integers(0, 8),
                       st.integers(0, 8), TEXT), max_size=6),
)  # fmt: skip
def test_edits_match_editing_the_whole_text(text: str, edits: list[tuple[int, int, int, int, str]]):
    buffer = Buffer(split_lines(text), 1)
    for line, character, lines_on, end_character, new in edits:
        start = types.Position(line=line, character=character)
        end = types.Position(line=line + lines_on % 3, character=end_character)
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=start, end=end), text=new
        )
        low = utf16_offset(text, start.line, start.character)
        high = utf16_offset(text, end.line, end.character)
        low, high = min(low, high), max(low, high)
        text = text[:low] + new + text[high:]
        buffer.replace(change, "utf-16")
        assert buffer.text() == text
        assert buffer.lines == split_lines(text)


def test_a_whole_text_change_replaces_the_buffer():
    buffer = Buffer(split_lines("old\n"), 1)
    buffer.replace(types.TextDocumentContentChangeWholeDocument(text="new\ntext"), "utf-16")
    assert buffer.text() == "new\ntext" and buffer.lines == ["new\n", "text"]
