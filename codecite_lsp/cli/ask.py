"""``codecite ask``: an answer with verified citations, the index refreshed first.

The answer comes as the language server's and MCP's do: with the root's tools
(service/tools.py), so a model that calls tools gets the loop (answer/tool_loop.py), each
call said on stderr as it starts; any other model answers from one retrieval.
"""

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
    from ..answer.tool_loop import Tools
    from ..core.answers import Citation
    from ..core.records import Result
    from ..retrieve.retriever import Retriever
    from ..service.privacy import Privacy


def cmd_ask(args: argparse.Namespace, repo: Path, config: Config) -> int:
    """Answer the question with verified citations, after refreshing the index."""
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
    from ..service.tools import RootTools

    root = _Root(repo, config)
    try:
        answer = root.answerer.ask(args.question, tools=_Said(RootTools(root)))
    except ValueError as exc:  # an empty question
        print(f"codecite: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(answer.model_dump_json())
    else:
        print(answer_to_text(answer, first_indent(repo)))
    return 0


class _Root:
    """What the loop's tools use of the repository (the service's ToolParts), for one ask."""

    def __init__(self, repo: Path, config: Config) -> None:
        from ..answer.pipeline import Answerer

        self.repo, self.config = repo, config
        self.answerer = Answerer(repo, config)

    @property
    def retriever(self) -> Retriever:
        return self.answerer.retriever  # one index view for retrieval and the tools

    def privacy(self) -> Privacy:
        from ..service.privacy import Privacy

        return Privacy(self.repo, self.config.resolved_index_dir(self.repo), self.config)


class _Said:
    """The loop's tools, each call said on stderr as it starts, in the words the language
    server's progress uses ("looking up the definition of `consume_value`")."""

    def __init__(self, tools: Tools) -> None:
        self.tools = tools

    def search(self, query: str) -> list[Result]:
        _say("search", query=query)
        return self.tools.search(query)

    def read(self, path: str, start_line: int, end_line: int) -> list[Result]:
        _say("read", path=path, start_line=start_line, end_line=end_line)
        return self.tools.read(path, start_line, end_line)

    def definition(self, symbol: str) -> list[Result]:
        _say("definition", symbol=symbol)
        return self.tools.definition(symbol)

    def callers(self, symbol: str) -> list[Result]:
        _say("callers", symbol=symbol)
        return self.tools.callers(symbol)


def _say(tool: str, **arguments: object) -> None:
    from ..answer.tool_loop import step

    # stderr, as the index pass's lines: with --json, stdout holds the answer only. The model
    # wrote the arguments: the command's TerminalStream shows their controls as escapes.
    print(f"codecite: {step(tool, arguments)}", file=sys.stderr)


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
