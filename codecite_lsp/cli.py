"""Command line: ``codecite index|search|ask|eval|stats|serve|mcp`` (shapes in docs/contracts.md).

Heavy modules (lancedb, litellm) are imported inside the commands that need them, so
``codecite --help`` and ``codecite serve``'s initialize stay fast.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__
from .core.config import Config, ConfigError, load_config
from .core.environment import apply_defaults
from .core.files import LARGE_FILE_BYTES, read_regular
from .core.limits import MAX_LIMIT, MAX_TEXT_CHARS
from .core.visible import TerminalStream, for_terminal, raw
from .ingest.injection import kinds
from .service.forbidden_roots import refusal

if TYPE_CHECKING:
    from .core.answers import Citation
    from .core.records import Finding, Result
    from .index.indexer import Indexer, IndexReport


def _build_parser() -> argparse.ArgumentParser:
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


class _ProgressBar:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()

    def __call__(self, done: int, total: int, message: str) -> None:
        if not self.enabled:
            return
        width = 30
        filled = width * done // total if total else width
        percent = 100 * done // total if total else 100
        line = f"[{'#' * filled}{'.' * (width - filled)}] {percent:3d}% {message[:50]:<50}"
        raw(sys.stderr).write("\r" + for_terminal(line))  # the message is a repository path
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            raw(sys.stderr).write("\r" + " " * 90 + "\r")
            sys.stderr.flush()


def _run_index(indexer: Indexer, quiet: bool, vectors: bool = True) -> IndexReport:
    """One index pass with the progress bar; skipped files are listed on stderr."""
    bar = _ProgressBar(not quiet)
    try:
        report = indexer.run(progress=bar, vectors=vectors)
    finally:
        bar.close()
    _print_skips(report)
    return report


def _print_skips(report: IndexReport) -> None:
    for skip in report.skipped:
        print(f"skipped {skip.path}: {skip.reason}", file=sys.stderr)


def _say_base(repo: Path, config: Config) -> None:
    """Why the ``base`` setting's base is not read (or what was read instead), on stderr."""
    if not config.base:
        return
    from .index.base import BaseError, OpenedBase, opened

    found = opened(repo, config, config.resolved_index_dir(repo))
    if isinstance(found, BaseError):
        print(
            f"codecite: base {config.base} not used: {found}; the local index holds every file",
            file=sys.stderr,
        )
    elif isinstance(found, OpenedBase) and found.note:
        print(f"codecite: base {config.base}: {found.note}", file=sys.stderr)


def _say_removed(repo: Path, config: Config) -> None:
    """What making the base's copy removed of the earlier ones (after the pass, which waits for
    the copy), on stderr."""
    if not config.base:
        return
    from .index.base import OpenedBase, opened

    found = opened(repo, config, config.resolved_index_dir(repo))
    if isinstance(found, OpenedBase) and (found.removed.copies or found.removed.leftovers):
        print(f"codecite: base {config.base}: {found.removed}", file=sys.stderr)


def _cmd_publish(args: argparse.Namespace, repo: Path, config: Config) -> int:
    """Index every file (no base under it) and write the index as HEAD's base at the URI."""
    from dataclasses import replace

    from .core.config import check_base
    from .index.base import BaseError, head_commit, publish, tracked_changes
    from .index.indexer import IndexBusy, Indexer
    from .index.store import IndexDamaged

    uri = args.publish
    try:
        check_base(uri)
        commit = head_commit(repo)
        changed = tracked_changes(repo)
        if changed:
            raise BaseError(
                f"{len(changed)} tracked files differ from HEAD ({', '.join(changed[:3])}): a"
                " base must hold its commit's own files; commit or stash them first"
            )
        whole = replace(config, base=None)
        indexer = Indexer(repo, whole)
        report = _run_index(indexer, args.quiet)
        published = publish(indexer.store, whole, commit, uri)
    except (ValueError, BaseError, IndexBusy, IndexDamaged) as exc:
        print(f"codecite: not published: {exc}", file=sys.stderr)
        return 1
    print(report.summary())
    print(
        f"published the base of {commit[:12]} to {uri}: {len(published.files)} files,"
        f" {published.chunks} chunks, embedder {published.embedder or 'none'}"
    )
    return 0


def _cmd_index(args: argparse.Namespace, repo: Path, config: Config) -> int:
    from .index import manifest

    if args.publish:
        return _cmd_publish(args, repo, config)
    _say_base(repo, config)
    # Nothing changed since the last complete pass: answered from a stat walk, without
    # importing lancedb (seconds); anything different runs the pass, which fixes it.
    report = None
    note = config.index_dir_note(repo)  # the repository cannot be written: where the index is
    said = f" - {note}" if note else ""
    # With a base, which one HEAD descends from may have changed without any file changing.
    if not os.environ.get(manifest.BYPASS_ENV) and not config.base:
        report = manifest.unchanged_since_last_pass(repo, config)
    if report is not None:
        _print_skips(report)
        print(report.summary() + said)
        return 0
    from .index.indexer import IndexBusy, Indexer
    from .index.store import IndexDamaged

    if (_why_index_first(repo, config) or "").startswith(_OUTDATED):
        print(f"codecite: {_OUTDATED}; rebuilding it", file=sys.stderr)
    try:
        indexer = Indexer(repo, config)
        report = _run_index(indexer, args.quiet)
    except (IndexBusy, IndexDamaged) as exc:  # locked too long; or unusable even rebuilt
        print(f"codecite: {exc}", file=sys.stderr)
        return 1
    _say_removed(repo, config)
    print(report.summary() + said)
    flagged = indexer.store.tables.untrusted_chunks()
    if flagged:
        print(_untrusted_summary(flagged))
    return 0


UNTRUSTED_LISTED = 10  # files named in the index report's untrusted line


def _untrusted_summary(flagged: Mapping[str, int]) -> str:
    """The index report's line on the chunks holding text addressed to an AI model."""
    files = sorted(flagged, key=lambda path: (-flagged[path], path))
    named = ", ".join(f"{path} ({flagged[path]})" for path in files[:UNTRUSTED_LISTED])
    more = f" and {len(files) - UNTRUSTED_LISTED} more" if len(files) > UNTRUSTED_LISTED else ""
    return (
        f"{sum(flagged.values())} chunks in {len(files)} files hold text addressed to an AI model"
        f" (shown to a model as untrusted data; no claim rests on them alone): {named}{more}"
    )


def _untrusted_mark(found: tuple[Finding, ...]) -> str:
    """A search result's line marking text addressed to an AI model."""
    lines = ", ".join(str(line) for line in dict.fromkeys(f.line for f in found))
    return (
        f"    UNTRUSTED: text addressed to an AI model ({', '.join(kinds(found))}) at line {lines}"
    )


def _search_queries(args: argparse.Namespace) -> list[str] | str:
    """The queries to answer, or what is wrong with them."""
    if (args.query is None) == (args.queries is None):
        return "give a query or --queries FILE (not both)"
    if args.query is not None:
        return [args.query] if args.query.strip() else "the query is empty"
    try:
        if args.queries == "-":
            text = sys.stdin.read()
        else:
            text = Path(args.queries).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read {args.queries}: {exc}"
    queries = [line.strip() for line in text.splitlines() if line.strip()]
    if any(len(query) > MAX_TEXT_CHARS for query in queries):
        return f"{args.queries} holds a query longer than {MAX_TEXT_CHARS} characters"
    return queries or f"{args.queries} holds no query"


_OUTDATED = "the index was written by another version of codecite"


def _why_index_first(repo: Path, config: Config) -> str | None:
    """Why a command must index the repository before it can search, or None: never indexed,
    or written in another layout (an upgrade), which opening the index empties. "" for a
    damaged meta.json: opening the index says so itself."""
    from .index.meta import MetaFile

    meta = MetaFile(config.resolved_index_dir(repo)).read()
    if meta.schema_version == -1:
        return ""
    if not meta.current:
        return f"{_OUTDATED}; rebuilding it first"
    if meta.chunk_budget is None:
        return "no index yet; indexing the repository first"
    return None


def _first_keyword_pass(repo: Path, config: Config, why: str) -> Indexer | None:
    """A repository never indexed (or whose index must be rebuilt): its keyword index, so that
    the first search answers from it at once (the vectors are filled after the results:
    ``_fill_behind``). None if another process holds the index (it is building it: the search
    reads what is there)."""
    from .index.indexer import IndexBusy, Indexer

    if why:
        print(f"codecite: {why}", file=sys.stderr)
    indexer = Indexer(repo, config)
    try:
        report = _run_index(indexer, quiet=False, vectors=False)
    except IndexBusy as exc:
        print(f"codecite: {exc}", file=sys.stderr)
        return None
    print(report.summary(), file=sys.stderr)  # stdout holds the results only
    return indexer


def _fill_behind(indexer: Indexer) -> int:
    """After a first search's results: the rest of the index (vectors), so the next search is
    hybrid. Standard output is closed first: a reader of the results (a pipe, ``--json``)
    has them all, and its end, now. The exit status: 130 if interrupted (nothing is lost: the
    next command that indexes fills the vectors)."""
    sys.stdout.flush()
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    from .index.indexer import IndexBusy

    bar = _ProgressBar(True)  # on a terminal: why the prompt has not come back yet
    try:
        indexer.run(progress=bar)  # every file unchanged since the keyword pass: the vectors
    except IndexBusy as exc:  # another process took the index meanwhile and goes on with it
        print(f"codecite: vectors not filled: {exc}", file=sys.stderr)
    except KeyboardInterrupt:  # the results are out: no traceback over them
        bar.close()
        print("codecite: interrupted; the next index pass fills the vectors", file=sys.stderr)
        return 130
    bar.close()
    return 0


def _cmd_search(args: argparse.Namespace, repo: Path, config: Config) -> int:
    from .retrieve.retriever import open_retriever

    queries = _search_queries(args)
    if isinstance(queries, str):
        print(f"codecite: {queries}", file=sys.stderr)
        return 2
    _say_base(repo, config)
    why = _why_index_first(repo, config)
    first = None if why is None else _first_keyword_pass(repo, config, why)
    retriever = open_retriever(repo, config)
    if retriever.store.meta.chunk_budget is None:  # still none: another process is building it
        # stderr: an empty result list alone reads as "nothing matches"
        print("codecite: no index yet; run `codecite index` first", file=sys.stderr)
    batch = args.queries is not None
    for query in queries:
        results = retriever.results(query, limit=args.limit)
        if args.json:
            shown = [_result_json(r, args.explain) for r in results]
            line: dict[str, object] = {"query": query} if batch else {}
            print(json.dumps({**line, "results": shown}, ensure_ascii=False), flush=batch)
            continue
        if batch:
            print(f"# {query}")
        if not results:
            print("no results")
        for result in results:
            symbol = f"  {result.symbol}" if result.symbol else ""
            place = f"{result.path}:{result.start_line}-{result.end_line}"
            print(f"{place}{symbol}  ({result.score:.3f})")
            if result.untrusted:
                print(_untrusted_mark(result.untrusted))
            if args.explain:
                print("    " + "  ".join(f"{name} {value:+.3f}" for name, value in result.terms))
    return 0 if first is None else _fill_behind(first)


def _result_json(result: Result, explain: bool) -> dict[str, object]:
    from .core.responses import SearchResult

    shown: dict[str, object] = SearchResult.of(result).model_dump(mode="json")
    if explain:
        shown["terms"] = dict(result.terms)
    return shown


def _cmd_ask(args: argparse.Namespace, repo: Path, config: Config) -> int:
    from .answer.pipeline import Answerer
    from .answer.render import answer_to_text
    from .index import manifest
    from .index.indexer import IndexBusy, Indexer

    _say_base(repo, config)
    why = _why_index_first(repo, config)  # before opening it: an outdated index opens empty
    indexer = Indexer(repo, config)
    if indexer.store.meta.chunk_budget is None:  # set by the first complete index pass
        if why:  # "": a damaged meta.json, which opening the index reported
            print(f"codecite: {why}", file=sys.stderr)
        # stderr: with --json, stdout holds the answer only
        print(_run_index(indexer, quiet=False).summary(), file=sys.stderr)
    elif manifest.unchanged_since_last_pass(repo, config) is None:
        # Without a watcher, files edited or deleted since the last pass would be quoted from
        # their old text; an incremental pass over unchanged files only hashes them.
        try:
            report = indexer.run()
        except IndexBusy as exc:  # a server is indexing: answer from what is there
            print(f"codecite: index not refreshed: {exc}", file=sys.stderr)
        except OSError as exc:  # a read-only or full index folder: answer from what is there
            print(f"codecite: index not refreshed: {_os_error(exc)}", file=sys.stderr)
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
        print(answer_to_text(answer, _first_indent(repo)))
    return 0


def _first_indent(repo: Path) -> Callable[[Citation], str | None]:
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


def _cmd_eval(args: argparse.Namespace) -> int:
    """Exit 0 only when no unverified statement is shown, every outcome is as expected and at
    most 2% of valid replies are refused."""
    from .answer.replay import MAX_CORPUS_BYTES, CorpusError, parse_corpus, report_lines, run

    path = Path(args.corpus)
    try:
        with path.open("rb") as handle:  # bounded: /dev/zero or a huge file is no corpus
            corpus = parse_corpus(handle.read(MAX_CORPUS_BYTES + 1))
    except OSError as exc:
        print(f"codecite: cannot replay {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except CorpusError as exc:
        print(f"codecite: cannot replay {path}: {exc}", file=sys.stderr)
        return 2
    report = run(corpus)
    if args.json:
        print(json.dumps({**report.summary(), "passed": report.passed}, indent=2))
    else:
        print("\n".join(report_lines(report, str(path))))
    return 0 if report.passed else 1


def _cmd_stats(args: argparse.Namespace, repo: Path, config: Config) -> int:
    from .answer.trace import summarise

    print(json.dumps(summarise(config.resolved_index_dir(repo)), indent=2))
    return 0


def _cmd_serve(args: argparse.Namespace, repo: Path, config: Config) -> int:
    from .lsp.handlers import run_stdio

    run_stdio()
    return 0


def _cmd_mcp(args: argparse.Namespace, repo: Path, config: Config) -> int:
    from .mcp import run_stdio

    # The Session reads the same files and env vars; flags left unset (None) change nothing.
    run_stdio(repo, {"index_dir": args.index_dir, "embedding": args.embedding})
    return 0


_COMMANDS = {
    "index": _cmd_index,
    "search": _cmd_search,
    "ask": _cmd_ask,
    "stats": _cmd_stats,
    "serve": _cmd_serve,
    "mcp": _cmd_mcp,
}


def main(argv: Sequence[str] | None = None) -> int:
    apply_defaults()
    args = _build_parser().parse_args(argv)
    if args.command not in ("serve", "mcp"):  # those speak a protocol on stdout
        _show_without_acting()
    if args.command == "eval":  # no repository involved
        return _cmd_eval(args)
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
    from .index.damage import not_a_folder
    from .index.tables import IndexDamaged

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
        print(f"codecite: {_os_error(exc)}", file=sys.stderr)
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


def _os_error(exc: OSError) -> str:
    where = f": {exc.filename}" if exc.filename else ""
    hint = (
        " (an index somebody else built here is read as it is; pass --index-dir DIR to keep"
        " one of your own)"
        if isinstance(exc, PermissionError)
        else ""
    )
    return f"{exc.strerror or exc}{where}{hint}"


def serve_main() -> None:
    """``codecite-lsp``: the same as ``codecite serve``."""
    sys.exit(main(["serve", *sys.argv[1:]]))
