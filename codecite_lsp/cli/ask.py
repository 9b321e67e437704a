"""``codecite ask``: an answer with verified citations, the index refreshed first."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.config import Config
from ..core.files import LARGE_FILE_BYTES, read_regular
from .common import os_error, run_index, say_base, why_index_first

if TYPE_CHECKING:
    from ..core.answers import Citation


def cmd_ask(args: argparse.Namespace, repo: Path, config: Config) -> int:
    """Answer the question with verified citations, after refreshing the index."""
    from ..answer.pipeline import Answerer
    from ..answer.render import answer_to_text
    from ..index import manifest
    from ..index.indexer import IndexBusy, Indexer

    say_base(repo, config)
    why = why_index_first(repo, config)  # before opening it: an outdated index opens empty
    indexer = Indexer(repo, config)
    if indexer.store.meta.chunk_budget is None:  # set by the first complete index pass
        if why:  # "": a damaged meta.json, which opening the index reported
            print(f"codecite: {why}", file=sys.stderr)
        # stderr: with --json, stdout holds the answer only
        print(run_index(indexer, quiet=False).summary(), file=sys.stderr)
    elif manifest.unchanged_since_last_pass(repo, config) is None:
        # Without a watcher, files edited or deleted since the last pass would be quoted from
        # their old text; an incremental pass over unchanged files only hashes them.
        try:
            report = indexer.run()
        except IndexBusy as exc:  # a server is indexing: answer from what is there
            print(f"codecite: index not refreshed: {exc}", file=sys.stderr)
        except OSError as exc:  # a read-only or full index folder: answer from what is there
            print(f"codecite: index not refreshed: {os_error(exc)}", file=sys.stderr)
        else:
            if report.written_files or report.deleted_files:
                print(f"codecite: index refreshed: {report.summary()}", file=sys.stderr)
    try:
        answer = Answerer(repo, config).ask(args.question)
    except ValueError as exc:  # an empty question
        print(f"codecite: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(answer.model_dump_json())
    else:
        print(answer_to_text(answer, first_indent(repo)))
    return 0


def first_indent(repo: Path) -> Callable[[Citation], str | None]:
    """The indentation of a citation's first line in the working tree, when that line still
    starts with the quote (a quote begins at its first word: its own indentation is lost)."""
    files: dict[str, list[str]] = {}

    def indent(citation: Citation) -> str | None:
        if citation.path not in files:
            try:
                data, _ = read_regular(repo / citation.path, LARGE_FILE_BYTES)
                text = data.decode("utf-8", errors="replace")
            except OSError:
                text = ""
            files[citation.path] = text.splitlines()
        lines, first = files[citation.path], citation.quote.strip().split("\n")[0].strip()
        if not first or not 0 < citation.start_line <= len(lines):
            return None
        line = lines[citation.start_line - 1]
        stripped = line.lstrip()
        return line[: len(line) - len(stripped)] if stripped.startswith(first) else None

    return indent
