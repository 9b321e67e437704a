"""Repository text for a terminal (pure): shown, never acted on.

A file's name, a docstring or a string literal may hold the characters a terminal obeys rather
than prints: ESC starts the sequences that clear the screen, set the title or write the
clipboard, CR overwrites a line, and bidirectional overrides make a line read otherwise than it
runs. The command line writes everything through :func:`for_terminal` when its output is a
terminal (piped output is left exact).
"""

from __future__ import annotations

from typing import IO

# C0 controls but tab and newline, DEL, C1 controls; the bidirectional marks, embeddings,
# overrides and isolates ("Trojan Source", CVE-2021-42574). Each is shown as its Python escape.
_ACTING = [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]
_BIDI = [0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_VISIBLE = {
    **{code: f"\\x{code:02x}" for code in _ACTING},
    **{code: f"\\u{code:04x}" for code in _BIDI},
}


def for_terminal(text: str) -> str:
    """Repository text as a terminal shows it without acting on it: every control and
    direction-changing character written as its escape (``\\x1b``, ``\\u202e``)."""
    return text.translate(_VISIBLE)


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
