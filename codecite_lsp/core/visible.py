"""Text made visible (pure): the characters a reader cannot see, and those a terminal obeys
rather than prints, spelled out.

Invisible Unicode (zero-width characters, bidi embeddings, overrides and isolates, tag
characters) makes text read otherwise than it is: to a model (``ingest.injection`` flags it and
the prompt spells it out) and to a person ("Trojan Source", CVE-2021-42574). A terminal also acts
on control characters: ESC starts the sequences that clear the screen, set the title or write
the clipboard, CR overwrites a line. The command line writes everything through
:func:`for_terminal` when its output is a terminal (piped output is left exact).
"""

from __future__ import annotations

import re
from typing import IO

# Always hidden: zero-width space and word joiners, bidi embeddings, overrides and isolates, and
# the tag characters that spell ASCII invisibly. (A byte-order mark is left alone: code that
# strips one holds one.)
INVISIBLE = re.compile("[\u200b\u2060-\u2064\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]+")
# Joiners and marks have honest uses (emoji sequences, Persian, Hebrew): hidden only between
# ASCII letters, where no script needs them.
JOINER = re.compile("(?<=[A-Za-z])[\u200c\u200d\u200e\u200f]+(?=[A-Za-z])")

# C0 controls but tab and newline, DEL, C1 controls: shown as their Python escapes.
_CONTROLS = {
    code: f"\\x{code:02x}" for code in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))
}


def visible(text: str) -> str:
    """Invisible characters spelled out as ``<U+200B>``; everything else unchanged."""

    def spell(match: re.Match[str]) -> str:
        return "".join(f"<U+{ord(char):04X}>" for char in match.group(0))

    return JOINER.sub(spell, INVISIBLE.sub(spell, text))


def for_terminal(text: str) -> str:
    """Text as a terminal shows it without acting on it: invisible characters spelled out
    (``<U+202E>``), controls but tab and newline written as their escapes (``\\x1b``)."""
    return visible(text).translate(_CONTROLS)


class TerminalStream:
    """A text stream (stdout, stderr) whose writes go through :func:`for_terminal`; ``raw``
    takes the controls codecite means (a progress bar's carriage return)."""

    def __init__(self, raw: IO[str]) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        return self.raw.write(for_terminal(text))

    def __getattr__(self, name: str) -> object:  # flush, fileno, isatty, encoding, buffer
        return getattr(self.raw, name)


def raw(stream: IO[str] | TerminalStream) -> IO[str]:
    """The stream under a :class:`TerminalStream`, else the stream itself."""
    return stream.raw if isinstance(stream, TerminalStream) else stream
