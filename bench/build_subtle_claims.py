"""The subtle-falsehood claims (issue 40): each pair is a true claim and its reversal on the
same verbatim quote, from installed code nobody here wrote (click, requests, the standard
library). Writes tests/fixtures/support/claims_subtle.jsonl in eval_support.py's row shape.

    python bench/build_subtle_claims.py

Each quote is found in the installed file (the build fails if it is not); the source is the
quote's lines and up to 8 lines either side, as retrieval would hand a chunk.
"""

from __future__ import annotations

import json
import sysconfig
from collections.abc import Callable, Sequence
from pathlib import Path

from codecite_lsp.verify.quotes import normalise_ws, quote_ranges

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SITE = Path(sysconfig.get_paths()["purelib"])
OUT = Path(__file__).parents[1] / "tests" / "fixtures" / "support" / "claims_subtle.jsonl"
VERSIONS = {"click": "click 8.5.1", "requests": "requests 2.34.2"}

# (file, quote, question, true claim, false claim, class of the falsehood)
PAIRS: list[tuple[str, str, str, str, str, str]] = [
    (
        "click/core.py",
        "# Return the first non-empty value of the list of environment variables.",
        "Which environment variable wins when several are set?",
        "With several environment variables, the first non-empty one is returned.",
        "With several environment variables, the last non-empty one is returned.",
        "direction",
    ),
    (
        "click/core.py",
        "rv = super().resolve_envvar_value(ctx) if rv is not None: return rv "
        "if self.allow_from_autoenv and ctx.auto_envvar_prefix is not None and self.name:",
        "Is the explicit envvar or the auto prefix tried first?",
        "An option's own envvar is tried before the auto_envvar_prefix variable.",
        "The auto_envvar_prefix variable is tried before an option's own envvar.",
        "precedence",
    ),
    (
        "click/core.py",
        "envvar_value = self.value_from_envvar(ctx)",
        "Where does a parameter's value come from when it is not on the command line?",
        "The environment variable is consulted before the default map.",
        "The default map is consulted before the environment variable.",
        "precedence",
    ),
    (
        "click/core.py",
        "possible_names.sort(key=lambda x: -len(x[0]))  # group long options first",
        "How is an option's name chosen?",
        "The parameter name comes from the longest option declared.",
        "The parameter name comes from the shortest option declared.",
        "direction",
    ),
    (
        "click/formatting.py",
        "if max_width is None: max_width = 80",
        "How wide is the help text?",
        "The help formatter's max_width defaults to 80.",
        "The help formatter's max_width defaults to 100.",
        "default",
    ),
    (
        "click/formatting.py",
        "width = max(min(shutil.get_terminal_size().columns, max_width) - 2, 50)",
        "How wide is the help text?",
        "The help width is never less than 50 columns.",
        "The help width is never more than 50 columns.",
        "condition",
    ),
    (
        "click/core.py",
        "if max_content_width is None and parent is not None:",
        "Does a sub-context inherit max_content_width?",
        "A context without its own max_content_width takes its parent's.",
        "A context takes its parent's max_content_width even when it has its own.",
        "condition",
    ),
    (
        "click/core.py",
        'f"{parent.auto_envvar_prefix}_{self.info_name.upper()}"',
        "How is a subcommand's envvar prefix built?",
        "A sub-context's envvar prefix is the parent's prefix, an underscore, then its own name.",
        "A sub-context's envvar prefix is its own name, an underscore, then the parent's prefix.",
        "precedence",
    ),
    (
        "click/core.py",
        'auto_envvar_prefix = auto_envvar_prefix.replace("-", "_")',
        "How is the envvar prefix normalised?",
        "Dashes in the envvar prefix become underscores.",
        "Underscores in the envvar prefix become dashes.",
        "direction",
    ),
    (
        "click/core.py",
        "first, second = decl.split(split_char, 1)",
        "How does click handle --shout/--no-shout?",
        "A --shout/--no-shout declaration is split at the first slash only.",
        "A --shout/--no-shout declaration is split at every slash.",
        "any_some",
    ),
    (
        "click/core.py",
        "if any(arg.help is not None for arg in args):",
        "When is the arguments section shown in the help?",
        "The arguments section is written if any argument has help.",
        "The arguments section is written only if every argument has help.",
        "any_some",
    ),
    (
        "click/core.py",
        "limit = formatter.width - 6 - max(len(cmd[0]) for cmd in commands)",
        "How long may a command's short help be?",
        "The short-help limit subtracts the longest command name from the width.",
        "The short-help limit subtracts the shortest command name from the width.",
        "direction",
    ),
    (
        "click/core.py",
        "limit = formatter.width - 6 - max(len(cmd[0]) for cmd in commands)",
        "How long may a command's short help be?",
        "The short-help limit also subtracts 6 columns.",
        "The short-help limit also subtracts 8 columns.",
        "count",
    ),
    (
        "requests/sessions.py",
        "if session_setting is None: return request_setting",
        "How are request and session settings merged?",
        "When the session setting is None, merge_setting returns the request setting.",
        "When the request setting is None, merge_setting returns the request setting.",
        "condition",
    ),
    (
        "requests/sessions.py",
        "merged_setting.update(to_key_val_list(request_setting))",
        "Which wins, the request's setting or the session's?",
        "Request settings override session settings when both are mappings.",
        "Session settings override request settings when both are mappings.",
        "precedence",
    ),
    (
        "requests/sessions.py",
        "self.trust_env = True",
        "Does a Session read the environment by default?",
        "A new Session trusts environment settings by default.",
        "A new Session ignores environment settings by default.",
        "default",
    ),
    (
        "requests/sessions.py",
        "new_auth = get_netrc_auth(url) if self.trust_env else None",
        "When is netrc used on a redirect?",
        "On a redirect, netrc credentials are read only if trust_env is set.",
        "On a redirect, netrc credentials are read only if trust_env is unset.",
        "condition",
    ),
    (
        "requests/sessions.py",
        "if self.trust_env and not auth and not self.auth:",
        "When does requests look up netrc auth?",
        "netrc auth is looked up when neither the request nor the session has auth.",
        "netrc auth is looked up when either the request or the session has auth.",
        "condition",
    ),
    (
        "shutil.py",
        "def get_terminal_size(fallback=(80, 24)):",
        "What does get_terminal_size fall back to?",
        "get_terminal_size falls back to 80 columns and 24 lines.",
        "get_terminal_size falls back to 24 columns and 80 lines.",
        "precedence",
    ),
    (
        "shutil.py",
        "if columns <= 0 or lines <= 0:",
        "When does get_terminal_size query the terminal?",
        "The terminal is queried when either COLUMNS or LINES is missing.",
        "The terminal is queried only when both COLUMNS and LINES are missing.",
        "any_some",
    ),
    (
        "shutil.py",
        "for dir in path: normdir = os.path.normcase(dir) if not normdir in seen:",
        "In which order does which search PATH?",
        "which searches the PATH directories in order, skipping repeated ones.",
        "which searches the PATH directories in reverse order, skipping repeated ones.",
        "direction",
    ),
    (
        "shutil.py",
        "if _access_check(name, mode): return name",
        "What does which return?",
        "which returns the first match it finds on the PATH.",
        "which returns the last match it finds on the PATH.",
        "direction",
    ),
    (
        "os.py",
        "def makedirs(name, mode=0o777, exist_ok=False):",
        "Does makedirs fail on an existing directory?",
        "By default makedirs treats an existing directory as an error.",
        "By default makedirs accepts an existing directory.",
        "default",
    ),
    (
        "os.py",
        "def makedirs(name, mode=0o777, exist_ok=False):",
        "What mode does makedirs use?",
        "makedirs creates directories with mode 0o777 by default.",
        "makedirs creates directories with mode 0o755 by default.",
        "default",
    ),
    (
        "genericpath.py",
        "dotIndex = p.rfind(extsep)",
        "Where does splitext split?",
        "splitext looks for the extension's dot from the end of the path.",
        "splitext looks for the extension's dot from the start of the path.",
        "direction",
    ),
    (
        "genericpath.py",
        "sepIndex = max(sepIndex, altsepIndex)",
        "Which separator does splitext use?",
        "splitext uses whichever separator comes later in the path.",
        "splitext uses whichever separator comes earlier in the path.",
        "direction",
    ),
    (
        "genericpath.py",
        "if dotIndex > sepIndex:",
        "When does a path have an extension?",
        "A dot counts as the extension only when it comes after the last separator.",
        "A dot counts as the extension only when it comes before the last separator.",
        "condition",
    ),
    (
        "textwrap.py",
        "def wrap(text, width=70, **kwargs):",
        "How wide does textwrap wrap?",
        "textwrap.wrap wraps to 70 columns by default.",
        "textwrap.wrap wraps to 80 columns by default.",
        "default",
    ),
    (
        "textwrap.py",
        "yield (prefix + line if predicate(line) else line)",
        "Which lines does indent prefix?",
        "indent adds the prefix to the lines the predicate accepts.",
        "indent adds the prefix to the lines the predicate rejects.",
        "condition",
    ),
    (
        "shutil.py",
        "def rmtree(path, ignore_errors=False, onerror=None, *, dir_fd=None):",
        "Does rmtree ignore errors?",
        "By default rmtree reports errors.",
        "By default rmtree ignores errors.",
        "default",
    ),
    (
        "shutil.py",
        "COPY_BUFSIZE = 1024 * 1024 if _WINDOWS else 64 * 1024",
        "How large is shutil's copy buffer?",
        "The copy buffer is larger on Windows than elsewhere.",
        "The copy buffer is smaller on Windows than elsewhere.",
        "condition",
    ),
    (
        "click/core.py",
        "if help_option_names is None:",
        "What are the default help options?",
        "A context without help_option_names gets a default list.",
        "A context without help_option_names gets no help option.",
        "default",
    ),
]


def claim_row(
    name: str, index: int, number: int, pair: tuple[str, ...], root: Path, repository: str,
    label: bool,
) -> dict:  # fmt: skip
    """One labelled row of ``pair`` (file, quote, question, true claim, false claim, class):
    its true claim (``label``) or its false one, citing the quote's lines of the installed file
    under ``root``, with those lines and 8 either side as the source."""
    file, quote, question, true, false, cls = pair
    lines = (root / file).read_text(encoding="utf-8").splitlines()
    spots = quote_ranges(lines, quote)
    assert spots, (file, quote)
    first, last = spots[0]
    start, end = max(1, first - 8), min(len(lines), last + 8)
    return {
        "id": f"{name}/{index}/{number}",
        "repository": repository,
        "question": question,
        "source": {
            "label": "S1",
            "path": file,
            "start_line": start,
            "end_line": end,
            "symbol": None,
        },
        "source_text": "\n".join(lines[start - 1 : end]),
        "start_line": first,
        "end_line": last,
        "cited_lines": "\n".join(lines[first - 1 : last]),
        "quote": normalise_ws(quote),
        "claim": true if label else false,
        "label": label,
        "cls": "true" if label else cls,
    }


def _row(index: int, number: int, pair: tuple[str, ...], label: bool) -> dict:
    package = pair[0].split("/")[0]
    root = SITE if package in VERSIONS else STDLIB
    repository = VERSIONS.get(package, "cpython 3.11.7 stdlib")
    return claim_row("subtle", index, number, pair, root, repository, label)


def write_claims(
    pairs: Sequence[tuple[str, ...]],
    row: Callable[[int, int, tuple[str, ...], bool], dict],
    out: Path,
) -> None:
    """Each pair as its true claim, then its false one, one JSON row a line."""
    rows = []
    for index, pair in enumerate(pairs, start=1):
        rows.append(row(index, 1, pair, True))
        rows.append(row(index, 2, pair, False))
    out.write_text("".join(json.dumps(one) + "\n" for one in rows), encoding="utf-8")
    print(f"{len(rows)} claims -> {out}")


def main() -> None:
    write_claims(PAIRS, _row, OUT)


if __name__ == "__main__":
    main()
