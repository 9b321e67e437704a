"""What a piece of retrieved source defines, by the chunker's tree-sitter queries (pure).

The offline answerer reads retrieved chunks, not whole files, so the text it asks about may be
a valid file only in some context: a TypeScript, C# or PHP method cut from a large class is no
statement at the top level, a PHP chunk lacks its ``<?php`` tag, a Python run may begin inside a
docstring. The text is read as it is and in each such context, and the reading the grammar
accepts best (the least error) is the one answer; lines of the context are not part of it.
Answering runs it in the parse worker (``ingest.readback.read_isolated``), never in its own
process: a fragment in a context is text no indexing pass has parsed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ingest.languages import LANGUAGES, language_for_path
from ..ingest.lines import Lines
from ..ingest.syntax import parse_any, parsed_headers

# Definitions whose body holds statements that do something (not a type's member list).
CALLABLE_KINDS = frozenset({"function", "method", "macro"})


@dataclass(frozen=True, slots=True)
class Defined:
    """One definition in a text, as 0-based line indexes into it (inclusive)."""

    name: str  # its own name, without its parents'
    kind: str
    head: int  # its first line, decorators included
    signature_end: int  # the last line before its body
    end: int  # its last line

    def encloses(self, index: int) -> bool:
        """Line ``index`` is in this definition's body."""
        return self.signature_end < index <= self.end


def definitions(path: str, text: str) -> list[Defined]:
    """Every definition the chunker's queries find in ``text``, by first line; [] for prose,
    plain text and text too deep to parse safely."""
    language = language_for_path(path)
    record = LANGUAGES[language] if language is not None else None
    if not text.strip() or record is None or record.prose:
        return []
    count = len(Lines(text).lines)
    # Only a file's first chunk holds its opening tag (PHP's `<?php`; any `<?` opens one).
    tag = record.opening_tag
    plain = tag if tag and not text.lstrip().startswith(tag[:2]) else ""
    chosen: list[Defined] = []
    # The contexts a chunk may have been cut from are tried in order when the text alone does
    # not parse cleanly; a context counts only when it parses cleanly.
    for number, (prefix, suffix) in enumerate(((plain, ""), *record.contexts)):
        lines = Lines(prefix + text + suffix)
        parsed = parse_any(record.name, lines)
        clean = parsed is not None and not (parsed.root_node and parsed.root_node.has_error)
        if parsed is None or (number and not clean):
            continue
        shift = prefix.count("\n")
        found = [
            Defined(
                header.name,
                header.kind,
                header.start_line - 1 - shift,
                header.end_line - 1 - shift,
                min(header.last_line - 1 - shift, count - 1),
            )
            for header in parsed_headers(parsed, lines)
            if shift < header.start_line <= shift + count  # not the context's own class
        ]
        if clean:
            return found
        chosen = found  # the text alone, errors and all, unless a context reads cleanly
    return chosen
