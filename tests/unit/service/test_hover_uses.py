"""Hover's "Used in": call sites in code (the index's ``uses`` column), never a docstring, a
comment or a doc page; nothing for ``self``, ``this``, keywords or builtins. A real index of a
small repository, the real hover explanation (offline)."""

from __future__ import annotations

import threading

import pytest
from lsp_helpers import indexed_session

from codecite_lsp.service.hover import explain
from codecite_lsp.service.session import Session

FILES = {
    "lib/output.py": 'def echo(message):\n    """Print ``message`` to the terminal."""\n'
    "    print(message)\n",
    "lib/other.py": 'def shout(message):\n    """Louder than echo: see the echo helper."""\n'
    "    return message.upper()\n",
    "lib/commands.py": "from lib.output import echo\n\n\nclass Greeter:\n"
    "    def __init__(self, name):\n        self.name = name\n\n"
    "    def greet(self):\n        # echo is the one printing\n"
    '        echo("hello " + self.name)\n',
    "docs/options.md": "# Options\n\nUse `echo` to print a line.\n\nThe echo helper prints.\n",
    "web/app.ts": "export class App {\n  name = 'x';\n  run(): string {\n"
    "    return this.name;\n  }\n}\n",
    "lib/limits.py": "GRACE_SECONDS = 24 * 3600\n\n\ndef expired(age):\n"
    "    return age > GRACE_SECONDS\n",
}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return indexed_session(tmp_path_factory.mktemp("hover-uses") / "repo", FILES)


def hover_at(session: Session, rel: str, line_text: str, word: str) -> str | None:
    text = FILES[rel]
    line = text.split("\n").index(line_text)
    character = line_text.index(word)
    return explain(session, session.root / rel, text, line, character, "utf-16", threading.Event())


def test_used_in_lists_the_call_site_not_docs_or_docstrings(session: Session) -> None:
    markdown = hover_at(session, "lib/output.py", "def echo(message):", "echo")
    assert markdown is not None
    used = [line for line in markdown.split("\n") if "Used in" in line]
    assert used and all("lib/commands.py" in line for line in used), markdown
    assert "lib/commands.py:L10" in used[0]  # the line of the call
    assert 'echo("hello " + self.name)' in markdown  # the call, not the comment above it
    assert "docs/options.md" not in markdown and "lib/other.py" not in markdown
    assert "echo is the one printing" not in markdown


def test_a_constant_is_used_where_it_is_read_not_where_it_is_set(session: Session) -> None:
    # Hovering the use: "Used in" names the line reading it, never `GRACE_SECONDS = ...`.
    markdown = hover_at(session, "lib/limits.py", "    return age > GRACE_SECONDS", "GRACE_SECONDS")
    assert markdown is not None
    used = [line for line in markdown.split("\n") if "Used in" in line]
    assert used and "lib/limits.py:L5" in used[0], markdown
    assert "lib/limits.py:L1" not in used[0], markdown


@pytest.mark.parametrize(
    ("rel", "line_text", "word"),
    [
        ("lib/commands.py", "        self.name = name", "self"),
        ("lib/output.py", "    print(message)", "print"),
        ("web/app.ts", "    return this.name;", "this"),
    ],
)
def test_no_used_in_for_self_this_keywords_or_builtins(
    session: Session, rel: str, line_text: str, word: str
) -> None:
    markdown = hover_at(session, rel, line_text, word) or ""
    assert "Used in" not in markdown, markdown
