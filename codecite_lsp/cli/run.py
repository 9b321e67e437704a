"""The command line's wiring: the parser, then each command run with what every command
checks first (the repository folder, its settings, the index folder) and the errors said in
one line. ``main`` and ``serve_main`` are the console scripts' (through ``codecite_lsp.cli``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.config import Config, ConfigError, load_config
from ..core.environment import apply_defaults
from ..core.limits import MAX_LIMIT, MAX_TEXT_CHARS
from ..core.visible import TerminalStream
from ..service.forbidden_roots import refusal
from .ask import cmd_ask
from .common import os_error
from .eval import cmd_eval
from .index import cmd_index
from .mcp import cmd_mcp
from .search import cmd_search
from .serve import cmd_serve
from .stats import cmd_stats


def build_parser() -> argparse.ArgumentParser:
    """The ``codecite`` parser: the common flags and one subparser per command."""
    parser = argparse.ArgumentParser(
        prog="codecite",
        description="Answers questions about a repository, citing verified lines.",
    )
    version = f"codecite {__version__}"
    parser.add_argument("--version", action="version", version=version)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--repo", default=".", help="repository root (default: current folder)")
    common.add_argument(
        "--index-dir", default=None, help="where the index lives (default: <repo>/.codecite)"
    )
    common.add_argument(
        "--embedding", default=None, help="'default', 'none', or a litellm embedding model"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    index = sub.add_parser("index", parents=[common], help="build or update the index")
    index.add_argument("--quiet", action="store_true", help="no progress bar")
    index.add_argument(
        "--publish",
        default=None,
        metavar="URI",
        help="then write the index as the shared base of HEAD (s3://bucket/prefix, gs://, az://"
        " or a folder; credentials from the standard environment), for the `base` setting",
    )

    search = sub.add_parser("search", parents=[common], help="retrieval only, no model")
    search.add_argument("query", nargs="?", type=_text, help="what to look for (or --queries)")
    search.add_argument(
        "--queries", default=None, help="a file of queries, one a line ('-': stdin), one index open"
    )
    search.add_argument("--limit", type=_limit, default=10)
    search.add_argument("--json", action="store_true")
    search.add_argument(
        "--explain", action="store_true", help="each result's score terms (what ranked it)"
    )

    ask = sub.add_parser("ask", parents=[common], help="answer with verified citations")
    ask.add_argument("question", type=_text)
    ask.add_argument("--model", default=None, help="a litellm model string, or 'extractive'")
    ask.add_argument("--json", action="store_true")

    evaluate = sub.add_parser(
        "eval", help="replay recorded model replies through the gate (a release gate for CI)"
    )
    evaluate.add_argument("corpus", help="a replay corpus (e.g. tests/fixtures/replay/corpus.json)")
    evaluate.add_argument("--json", action="store_true")

    sub.add_parser("stats", parents=[common], help="summarise the request trace log")
    serve = sub.add_parser("serve", parents=[common], help="the language server on stdio")
    # Here too, so `codecite-lsp --version` (an alias of `serve`) answers.
    serve.add_argument("--version", action="version", version=version)
    sub.add_parser("mcp", parents=[common], help="the MCP server for coding agents, on stdio")
    return parser


def _text(value: str) -> str:
    """A question or query: bounded as at every door (core/limits.py); longer ones are cut."""
    if len(value) > MAX_TEXT_CHARS:
        raise argparse.ArgumentTypeError(
            f"is too long ({len(value)} characters; at most {MAX_TEXT_CHARS})"
        )
    return value


def _limit(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not 1 <= number <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_LIMIT}")
    return number


def _config(args: argparse.Namespace, repo: Path) -> Config:
    overrides: dict[str, Any] = {
        "index_dir": args.index_dir,
        "embedding": args.embedding,
        "model": getattr(args, "model", None),
    }
    notices: list[str] = []
    config = load_config(repo, overrides, notices=notices)
    for notice in notices:
        print(f"codecite: {notice}", file=sys.stderr)
    return config


_COMMANDS = {
    "index": cmd_index,
    "search": cmd_search,
    "ask": cmd_ask,
    "stats": cmd_stats,
    "serve": cmd_serve,
    "mcp": cmd_mcp,
}


def main(argv: Sequence[str] | None = None) -> int:
    apply_defaults()
    args = build_parser().parse_args(argv)
    if args.command not in ("serve", "mcp"):  # those speak a protocol on stdout
        _show_without_acting()
    if args.command == "eval":  # no repository involved
        return cmd_eval(args)
    repo = Path(args.repo).resolve()
    if not repo.is_dir():
        print(f"codecite: repository folder not found: {repo}", file=sys.stderr)
        return 2
    if args.command != "serve":  # the language server is given its roots by the editor
        refused = refusal(repo)
        if refused is not None:  # before anything is read or written there
            print(f"codecite: not indexing: {refused}", file=sys.stderr)
            return 2
    try:
        config = _config(args, repo)
    except ConfigError as exc:
        for problem in exc.problems:
            print(f"codecite: invalid setting: {problem}", file=sys.stderr)
        return 2
    from ..index.damage import not_a_folder
    from ..index.tables import IndexDamaged

    damaged = not_a_folder(config.resolved_index_dir(repo))
    if damaged is not None and args.command != "serve":
        print(f"codecite: {damaged}", file=sys.stderr)
        return 1
    try:
        return _COMMANDS[args.command](args, repo, config)
    except IndexDamaged as exc:  # search/ask on an index a rebuild of its parts did not fix
        print(f"codecite: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: every write commits whole, so nothing is lost
        kept = "; what was indexed is kept, and the next run goes on from there"
        print(f"codecite: interrupted{kept if args.command == 'index' else ''}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `codecite search ... | head`: the reader is gone, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit flush
        return 1
    except OSError as exc:  # e.g. an index folder that cannot be created or written
        print(f"codecite: {os_error(exc)}", file=sys.stderr)
        return 1


def _show_without_acting() -> None:
    """On a terminal, repository text (paths, quotes, symbols) is shown, never obeyed: a
    control or invisible character in it is spelled out. Piped output stays exact, but for
    what its encoding cannot hold (`PYTHONIOENCODING=ascii`, a Latin-1 locale): a backslash
    escape, not a traceback."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if isinstance(stream, TerminalStream):
            continue
        reconfigure = getattr(stream, "reconfigure", None)  # absent on a replaced stream
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
        if stream.isatty():
            setattr(sys, name, TerminalStream(stream))


def serve_main() -> None:
    """``codecite-lsp``: the same as ``codecite serve``."""
    sys.exit(main(["serve", *sys.argv[1:]]))
