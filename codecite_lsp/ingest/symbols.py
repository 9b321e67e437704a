"""The identifier under an editor position and the definitions around it (pure: no I/O)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.positions import Encoding, codepoint_index
from .languages import language_for_path
from .lines import Lines
from .syntax import IDENTIFIER, Def, parse_any


@dataclass(frozen=True, slots=True)
class SymbolAtPosition:
    """The identifier under a position and the definition(s) around it.

    ``enclosing`` is the symbol path of the innermost definition containing the position
    (``"KeyStore.rotate_key"``), None outside any definition; ``on_definition`` is True when the
    position is on that definition's own name. Lines are 1-based in ``enclosing_lines``.
    """

    name: str
    enclosing: str | None
    on_definition: bool
    enclosing_kind: str | None = None
    enclosing_lines: tuple[int, int] | None = None


def _identifier_at(line: str, index: int) -> re.Match[str] | None:
    words = list(IDENTIFIER.finditer(line))
    inside = next((m for m in words if m.start() <= index < m.end()), None)
    return inside or next((m for m in words if m.end() == index), None)


def symbol_at(
    path: str,
    text: str,
    line: int,
    character: int,
    *,
    encoding: Encoding = "utf-16",
    parse: bool = True,
) -> SymbolAtPosition | None:
    """The identifier at 0-based ``line``/``character`` and the definitions around it. Pure.

    ``character`` counts UTF-16 code units (the LSP default); pass ``encoding="utf-32"`` for
    code points or ``"utf-8"`` for bytes when the client negotiated another position encoding.
    A position just after an identifier counts as on it. None when no identifier is there.
    ``parse=False`` gives the identifier alone (for text whose parse crashed a worker).
    """
    if not text:
        return None
    try:
        lines = Lines(text)
    except UnicodeEncodeError:  # a lone surrogate sent by a client: nothing sensible to show
        return None
    if not 0 <= line < lines.count:
        return None
    row = lines.lines[line]
    index = codepoint_index(row, character, encoding)
    found = _identifier_at(row, index)
    if found is None:
        return None
    parsed = parse_any(language_for_path(path), lines) if parse else None
    offset = lines.byte_starts[line] + len(row[: found.start()].encode("utf-8"))
    innermost: Def | None = None
    level = parsed.roots if parsed else []
    while True:
        inside = next((d for d in level if d.start <= line < d.end), None)
        if inside is None:
            break
        innermost, level = inside, inside.children
    if innermost is None:
        return SymbolAtPosition(found.group(), None, False)
    name_start, name_end = innermost.name_bytes
    return SymbolAtPosition(
        name=found.group(),
        enclosing=innermost.path,
        on_definition=name_start <= offset < name_end,
        enclosing_kind=innermost.kind,
        enclosing_lines=(innermost.start + 1, innermost.end),
    )
