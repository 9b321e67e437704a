"""Text that crashes tree-sitter for real when the nesting checks are off
(``CODECITE_UNGUARDED_PARSE=1``), shared by the tiers that prove a crash costs only itself."""

from __future__ import annotations

# issue 10's 271-byte file: 260 nested block quotes are a SIGSEGV in tree-sitter-markdown.
MARKDOWN_BOMB = "# T\n\n" + ">" * 260 + " word\n"
# tree-sitter-kotlin aborts (SIGABRT) past 1,024 string templates nested in one another.
KOTLIN_BOMB = "val s = " + '"${' * 1100 + "1" + '}"' * 1100 + "\n"


def kotlin_read_back_bomb() -> str:
    """A Kotlin file that indexes whole but crashes when its chunks are read back: the nested
    templates sit in a block comment, which the indexer parses as one comment; its lines are
    chunks of their own (each near max_line_length), and a run of them read without the line
    opening the comment is 1,980 templates deep. Every one of those lines says ``nest``."""
    head = "fun billingHead(): Int {\n"
    head += "".join(
        f"    val invoice{i} = ledger.total(account{i}, currency{i})\n" for i in range(20)
    )
    head += "    return 1\n} /* quoted:\n"
    line = "nest + " + '"${' * 330 + "\n"
    return head + line * 6 + "*/\nfun billingTail(): Int = 1\n"


# Beside it, the code that answers "What does nest do?".
NEST_PY = 'def nest(key):\n    """Wrap the key in one more envelope."""\n    return [key]\n'
