"""Support, not just presence: a verbatim quote does not carry a claim that says more than it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codecite_lsp.core.answers import ClaimSpan
from codecite_lsp.core.records import outside_source
from codecite_lsp.verify.feedback import retry_feedback, user_detail
from codecite_lsp.verify.gate import GateFailed, GatePassed, verify
from codecite_lsp.verify.support import Evidence, missing

# click 8.x termui.confirm, lines 321-345, as retrieval hands it to the model.
CONFIRM = """\
    prompt = _build_prompt(
        text,
        prompt_suffix,
        show_default,
        "y/n" if default is None else ("Y/n" if default else "y/N"),
    )

    while True:
        try:
            value = _readline_prompt(visible_prompt_func, prompt, err).lower().strip()
        except (KeyboardInterrupt, EOFError):
            raise Abort() from None
        if value in ("y", "yes"):
            rv = True
        elif value in ("n", "no"):
            rv = False
        elif default is not None and value == "":
            rv = default
        else:
            echo(_("Error: invalid input"), err=err)
            continue
        break
    if abort and not rv:
        raise Abort()
    return rv"""
SOURCE = outside_source("S1", "click/termui.py", 321, 345, CONFIRM, symbol="confirm")
# A wide chunk: 48 lines of padding, then the prompt loop (a one-word quote in a 48-line range).
PADDED = outside_source(
    "S1", "click/termui.py", 273, 345, "\n".join(["    #"] * 48) + "\n" + CONFIRM
)


def answer(text: str, start: int, end: int, quote: str, label: str = "S1") -> str:
    citation = {"source": label, "start_line": start, "end_line": end, "quote": quote}
    spans: list[dict[str, Any]] = [{"kind": "claim", "text": text, "citations": [citation]}]
    return json.dumps({"spans": spans, "refuse": None})


def failure_of(result: object) -> tuple[str | None, str]:
    assert isinstance(result, GateFailed), result
    (failure,) = result.failures
    return failure.why, failure.detail


def test_a_quantifier_and_a_value_the_quote_does_not_show_are_refused() -> None:
    # The accepted lie: the quote is verbatim, the claim is not what it says.
    raw = answer(
        "An empty answer always returns True, whatever the default.", 338, 338, "rv = default"
    )
    result = verify(raw, [SOURCE])
    why, detail = failure_of(result)
    assert why == "claim_unsupported"
    assert "'always'" in detail and "'True'" in detail
    assert isinstance(result, GateFailed)
    # The retry names what the claim said beyond its quote and shows the real line.
    feedback = retry_feedback(result.failures, [SOURCE])
    assert "the claim says 'always', 'True', which its quoted lines do not show" in feedback
    assert "338 |             rv = default" in feedback
    assert user_detail(result.failures, [SOURCE]) == (
        "click/termui.py:338-338: the statement says more than the quoted lines show"
    )


def test_true_claims_with_matching_quotes_still_pass() -> None:
    for text, start, end, quote in (
        (
            "An empty answer returns the default when one is set.",
            337,
            338,
            'elif default is not None and value == "": rv = default',
        ),
        (
            "Typing y or yes makes confirm return True.",
            333,
            334,
            'if value in ("y", "yes"): rv = True',
        ),
        ("An interrupt raises `Abort`.", 331, 332, "raise Abort() from None"),
        ("With abort set, a negative answer raises Abort.", 343, 344, "if abort and not rv:"),
        ("Any other input prints an error and asks again.", 339, 341, "continue"),
    ):
        assert isinstance(verify(answer(text, start, end, quote), [SOURCE]), GatePassed), text


def test_a_lone_bracket_or_block_word_quoted_whole_is_not_evidence() -> None:
    for line, quote in ((326, ")"), (339, "else:")):
        raw = answer("The prompt is built before the loop.", line, line, quote)
        assert failure_of(verify(raw, [SOURCE]))[0] == "quote_too_trivial", quote
    # A short line that says something is still evidence.
    assert isinstance(verify(answer("The loop ends.", 342, 342, "break"), [SOURCE]), GatePassed)


def test_a_wide_range_is_cut_to_its_quote_and_four_lines_either_side() -> None:
    # 48 lines for one word: the citation shown points at the quote's line and 4 either side.
    result = verify(
        answer("confirm reads the answer with a prompt.", 298, 345, "_readline_prompt"), [PADDED]
    )
    assert isinstance(result, GatePassed), result
    span = result.spans[0]
    assert isinstance(span, ClaimSpan)
    assert (span.citations[0].start_line, span.citations[0].end_line) == (326, 334)
    # What is only further off in the range does not support the claim ("False" is line 336,
    # 5 below the quote's).
    raw = answer("An interrupt makes confirm return False.", 298, 345, "KeyboardInterrupt")
    why, detail = failure_of(verify(raw, [PADDED]))
    assert why == "claim_unsupported" and "'False'" in detail


def test_names_numbers_literals_and_negations_must_be_shown() -> None:
    cases = {
        "confirm lowercases the answer with `casefold()`.": (330, 330, ".lower().strip()"),
        "Typing 'sure' returns True.": (333, 334, 'if value in ("y", "yes"): rv = True'),
        "confirm retries 3 times before giving up.": (339, 341, "continue"),
        "The prompt is built by `_make_prompt`.": (321, 321, "prompt = _build_prompt("),
        "confirm does not lowercase the answer.": (330, 330, ".lower().strip()"),
        "Only y is accepted as yes.": (333, 333, 'if value in ("y", "yes"):'),
    }
    for text, (start, end, quote) in cases.items():
        raw = answer(text, start, end, quote)
        assert failure_of(verify(raw, [SOURCE]))[0] == "claim_unsupported", text


# ---------------------------------------------------------------------------------------------
# The labelled set: real quotes from real prompts, true and subtly false claims (make_claims.py)

CLAIMS = Path(__file__).parents[2] / "fixtures" / "support" / "claims.jsonl"
TARGETS = {"number", "name", "literal", "negation", "quantifier"}


def accepted(row: dict[str, Any]) -> bool:
    source = outside_source(**row["source"], text=row["source_text"])
    raw = answer(row["claim"], row["start_line"], row["end_line"], row["quote"], source.label)
    return isinstance(verify(raw, [source]), GatePassed)


def test_no_false_claim_of_a_target_class_is_shown_and_few_true_ones_are_refused() -> None:
    rows = [json.loads(line) for line in CLAIMS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 100 and len({row["repository"] for row in rows}) >= 3
    true = [row for row in rows if row["label"]]
    targeted = [row for row in rows if row["cls"] in TARGETS]
    assert len(true) >= 50 and len(targeted) >= 40
    assert [row["claim"] for row in targeted if accepted(row)] == []
    refused = [row["claim"] for row in true if not accepted(row)]
    assert len(refused) <= 0.03 * len(true), refused


# click 8.x core.Option._parse_decls: how a "--shout/--no-shout" declaration is split.
SPLIT = """\
            if split_char in decl:
                first, second = decl.split(split_char, 1)
                first = first.rstrip()
                if first:
                    possible_names.append(_split_opt(first))
                    opts.append(first)
                second = second.lstrip()
                if second:
                    secondary_opts.append(second.lstrip())"""


def test_the_questions_own_names_and_examples_count_as_given() -> None:
    source = outside_source("S1", "click/core.py", 2600, 2608, SPLIT, symbol="Option._parse_decls")
    claim = "A declaration like --shout/--no-shout is split at the slash into a first and a second."
    raw = answer(claim, 2601, 2601, "first, second = decl.split(split_char, 1)")
    assert isinstance(
        verify(raw, [source], "How does click handle --shout/--no-shout?"), GatePassed
    )
    # Without the question the options are the claim's own, and the lines do not show them.
    why, detail = failure_of(verify(raw, [source]))
    assert why == "claim_unsupported" and "--shout" in detail
    # The question gives names, never what the claim asserts of them (a constant, a count).
    false = "The split makes secondary_opts True."
    raw = answer(false, 2608, 2608, "secondary_opts.append(second.lstrip())")
    assert isinstance(verify(raw, [source], "Is secondary_opts True?"), GateFailed)


def test_a_word_after_a_percent_or_a_hyphen_is_no_option() -> None:
    evidence = Evidence("message = message % ctx.obj")
    assert missing("The message is %-formatted with the context object.", evidence) == []
    assert missing("The message takes --help.", evidence) == ["--help"]


def test_a_count_is_shown_by_as_many_citations() -> None:
    raw = json.dumps(
        {
            "spans": [
                {
                    "kind": "claim",
                    "text": "confirm sets rv in three places.",
                    "citations": [
                        {"source": "S1", "start_line": n, "end_line": n, "quote": q}
                        for n, q in ((334, "rv = True"), (336, "rv = False"), (338, "rv = default"))
                    ],
                }
            ]
        }
    )
    assert isinstance(verify(raw, [SOURCE]), GatePassed)
    two = answer("confirm sets rv in three places.", 334, 334, "rv = True")
    assert isinstance(verify(two, [SOURCE]), GateFailed)


def test_narrowing_keeps_the_rest_of_the_statement_the_quote_begins() -> None:
    text = "\n".join(
        ["    #"] * 10 + ["    parser.add_argument(", '        "--retries",', "        type=int,",
                         '        metavar="N",', '        help="tries",', "        required=False,",
                         "        default=3,", "    )", "    return parser"]
    )  # fmt: skip
    source = outside_source("S1", "cli.py", 1, 19, text, symbol="build_parser")
    raw = answer("The --retries option defaults to 3.", 1, 19, '"--retries",')
    result = verify(raw, [source])
    assert isinstance(result, GatePassed), result
    span = result.spans[0]
    assert isinstance(span, ClaimSpan)
    # The quote's line 12 and 4 either side, then on to the statement's end: default=3 (17).
    assert (span.citations[0].start_line, span.citations[0].end_line) == (8, 18)


def test_the_feedback_shows_every_citation_the_failing_claim_rests_on() -> None:
    citations = [
        {"source": "S1", "start_line": 334, "end_line": 334, "quote": "rv = True"},
        {"source": "S1", "start_line": 343, "end_line": 343, "quote": "if abort and not rv:"},
    ]
    spans = [{"kind": "claim", "text": "confirm always returns True.", "citations": citations}]
    result = verify(json.dumps({"spans": spans}), [SOURCE])
    assert isinstance(result, GateFailed)
    feedback = retry_feedback(result.failures, [SOURCE])
    assert "Lines 334-334 of S1" in feedback and "Lines 343-343 of S1" in feedback


def test_a_negation_in_a_condition_or_a_description_asserts_nothing_to_show() -> None:
    # Lines 343-344: `if abort and not rv:` / `raise Abort()`; 330: the read.
    quote = "raise Abort()"
    for text in (
        "When the answer is not yes, confirm raises Abort if abort is set.",
        "An answer that is not yes makes confirm raise Abort when abort is set.",
    ):
        assert isinstance(verify(answer(text, 343, 344, quote), [SOURCE]), GatePassed), text
    # Said of what the code does, a negation must be shown.
    raw = answer("confirm does not lowercase the answer.", 330, 330, ".lower().strip()")
    assert failure_of(verify(raw, [SOURCE]))[0] == "claim_unsupported"


def test_an_option_of_the_question_is_no_negation_and_a_name_may_be_named_by_its_words() -> None:
    text = "    def get_completion_args(self) -> tuple[list[str], str]:\n        return [], ''"
    source = outside_source("S1", "shell.py", 10, 11, text, symbol="PowerShellComplete")
    raw = answer("PowerShell completion reads its arguments here.", 10, 10, "get_completion_args")
    assert isinstance(verify(raw, [source]), GatePassed)
    flag = "    flag = decl.split('/', 1)"
    source = outside_source("S1", "core.py", 5, 5, flag, symbol="Option._parse_decls")
    raw = answer("A declaration like --shout/--no-shout is split at the slash.", 5, 5, flag.strip())
    assert isinstance(verify(raw, [source], "How does --shout/--no-shout work?"), GatePassed)


def test_with_the_model_check_the_wording_is_left_to_it() -> None:
    raw = answer("It always aborts.", 343, 344, "raise Abort()")
    assert failure_of(verify(raw, [SOURCE]))[0] == "claim_unsupported"
    assert isinstance(verify(raw, [SOURCE], wording=False), GatePassed)
    # Names, numbers and literals stay the gate's: the model check never sees them unshown.
    raw = answer("It raises `Abort` 3 times.", 343, 344, "raise Abort()")
    assert failure_of(verify(raw, [SOURCE], wording=False))[0] == "claim_unsupported"


def test_a_number_is_its_value_and_a_path_ends_before_the_full_stop() -> None:
    text = '    keepalive_expiry: float = 5.0,\n    if request.http_version < b"1.1":'
    source = outside_source("S1", "config.py", 20, 21, text, symbol="Limits")
    expiry = "keepalive_expiry: float = 5.0"
    raw = answer("Idle connections expire after 5 seconds.", 20, 20, expiry)
    assert isinstance(verify(raw, [source]), GatePassed)
    raw = answer("Requests older than HTTP/1.1.", 21, 21, 'if request.http_version < b"1.1":')
    assert isinstance(verify(raw, [source]), GatePassed)
    raw = answer("Idle connections expire after 6 seconds.", 20, 20, expiry)
    assert failure_of(verify(raw, [source]))[0] == "claim_unsupported"


def test_a_name_may_be_a_part_of_one_the_lines_hold_but_not_another_name() -> None:
    text = "    if is_ipv4_hostname(hostname):\n        mounts[hostname] = None"
    source = outside_source("S1", "utils.py", 40, 41, text, symbol="get_environment_proxies")
    quote = "if is_ipv4_hostname(hostname):"
    assert isinstance(verify(answer("IPv4 hosts are mounted apart.", 40, 40, quote), [source]),
                      GatePassed)  # fmt: skip
    raw = answer("IPv6 hosts are mounted apart.", 40, 40, quote)
    assert failure_of(verify(raw, [source]))[0] == "claim_unsupported"
    raw = answer("Each `/`-separated part is checked.", 40, 40, quote)
    assert isinstance(verify(raw, [source]), GatePassed)


def test_the_blocks_a_line_runs_in_are_its_headers_outermost_first() -> None:
    from codecite_lsp.verify.support import enclosing_definition, enclosing_headers

    code = """def launch(url, locate=False):
    if WIN:
        if locate:
            return explorer(url)
        os.startfile(url)
    return 0"""
    known = dict(enumerate(code.split("\n"), start=10))
    header = "def launch(url, locate=False):"
    assert enclosing_headers(known, 13) == [header, "if WIN:", "if locate:"]
    assert enclosing_headers(known, 14) == [header, "if WIN:"]
    assert enclosing_headers(known, 15) == [header]
    assert enclosing_headers(dict(enumerate(CONFIRM.split("\n"), start=321)), 344) == [
        "if abort and not rv:"
    ]
    # Lines the sources do not hold between: the header above them may be another function's
    # (a read of lines 239-252 under the chunk of `register_algorithm` far above).
    apart = {10: "def register_algorithm(alg):", 11: "    pass", 40: "    if alg not in allowed:"}
    assert enclosing_headers(apart, 40) == []
    assert enclosing_definition(apart, 40) == ""


def test_a_citation_a_line_short_of_a_name_it_gives_grows_to_show_it() -> None:
    # Line 333 `if value in ("y", "yes"):`, 334 `rv = True`: the claim names what 334 holds.
    raw = answer("Answering `yes` sets `rv` to `True`.", 333, 333, 'if value in ("y", "yes"):')
    result = verify(raw, [SOURCE])
    assert isinstance(result, GatePassed), result
    span = result.spans[0]
    assert isinstance(span, ClaimSpan)
    cited = span.citations[0]
    assert (cited.start_line, cited.end_line) == (333, 334)
    assert cited.quote == 'if value in ("y", "yes"):'


def test_a_name_further_than_the_next_line_is_still_unsupported() -> None:
    # `_readline_prompt` is on line 330, four lines above the cited 334.
    why, detail = failure_of(
        verify(answer("`rv` comes from `_readline_prompt`.", 334, 334, "rv = True"), [SOURCE])
    )
    assert why == "claim_unsupported" and "'_readline_prompt'" in detail


# tqdm's docstring: a parameter's entry, then the lines describing it.
DOCSTRING = outside_source(
    "S1",
    "tqdm/std.py",
    270,
    276,
    """    ncols  : int, optional
        The width of the entire output message. If specified,
        dynamically resizes the progressbar to stay within this bound.
        If unspecified, attempts to use environment width. The
        fallback is a meter width of 10 and no limit for the counter and
        statistics. If 0, will not print any meter (only stats).
    mininterval  : float, optional""",
)


def test_a_described_line_may_name_the_entry_it_sits_under_but_not_take_its_values() -> None:
    quote = "If unspecified, attempts to use environment width."
    raw = answer("Without `ncols`, the bar attempts to use the environment width.", 273, 274, quote)
    assert isinstance(verify(raw, [DOCSTRING]), GatePassed)
    # `while True:` encloses line 338 (`rv = default`) but shows no value the claim can assert.
    why, detail = failure_of(
        verify(answer("An empty answer returns True.", 338, 338, "rv = default"), [SOURCE])
    )
    assert why == "claim_unsupported" and "'True'" in detail


def test_a_constant_in_plain_words_matches_its_capitalised_form() -> None:
    source = outside_source(
        "S1",
        "static.py",
        1,
        2,
        "    # Null bytes or other invalid characters.\n    raise ValueError(path)",
    )
    raw = answer(
        "A path with null bytes raises a ValueError.",
        1,
        2,
        "Null bytes or other invalid characters.",
    )
    assert isinstance(verify(raw, [source]), GatePassed)
