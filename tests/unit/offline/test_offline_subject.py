"""An offline answer points at the working code: the statements of the definition the question
is about, not its docstring; and it refuses only on retrieval's evidence, not on a missing word.
The fixtures are cut down from click's core.py (the questions of issue 21)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from record_helpers import result

from codecite_lsp.core.records import Result, Source, outside_source
from codecite_lsp.offline.evidence import OFFLINE_FLOOR, Evidence, gather
from codecite_lsp.offline.extractive import answer
from codecite_lsp.verify.gate import GatePassed, GateRefusedByModel, verify

STRONG = Evidence(relevance=0.8, named=False)

GET_SOURCE = '''class Context:
    def get_parameter_source(self, name):
        """Get the source of a parameter. This indicates the location
        from which the value of the parameter was obtained.

        :param name: The name of the parameter.
        :rtype: ParameterSource
        """
        return self._parameter_source.get(name)
'''
SOURCE_ENUM = '''class ParameterSource(enum.IntEnum):
    """This is an enum that indicates the source of a parameter's value."""

    COMMANDLINE = enum.auto()
    ENVIRONMENT = enum.auto()
    DEFAULT = enum.auto()
'''
CONSUME = '''class Parameter:
    def consume_value(self, ctx, opts):
        """Returns the parameter value produced by the parser."""
        value = opts.get(self.name, UNSET)
        source = (
            ParameterSource.COMMANDLINE
            if value is not UNSET
            else ParameterSource.DEFAULT
        )
        if value is UNSET:
            envvar_value = self.value_from_envvar(ctx)
            if envvar_value is not None:
                value = envvar_value
                source = ParameterSource.ENVIRONMENT
        if value is UNSET:
            default_map_value = ctx.lookup_default(self.name)
            if default_map_value is not None:
                value = default_map_value
                source = ParameterSource.DEFAULT_MAP
        return value, source
'''
CONTEXT_INVOKE = '''class Context:
    def invoke(self, callback, *args, **kwargs):
        """Invokes a command callback in exactly the way it expects."""
        if isinstance(callback, Command):
            other_cmd = callback
            if other_cmd.callback is None:
                raise TypeError("The given command does not have a callback that can be invoked.")
            callback = other_cmd.callback
        return callback(*args, **kwargs)
'''
GROUP = '''class Group(Command):
    """
    :param invoke_without_command: Invoke the group's callback even if a
        subcommand is not given.
    """

    def invoke(self, ctx):
        def _process_result(value):
            return value

        if not ctx._protected_args:
            if self.invoke_without_command:
                with ctx:
                    rv = super().invoke(ctx)
                    return _process_result([] if self.chain else rv)
            ctx.fail("Missing command.")
'''


def _sources(*texts: tuple[str, str | None, str]) -> list[Source]:
    out, line = [], 1
    for number, (path, symbol, text) in enumerate(texts, start=1):
        count = text.count("\n")
        out.append(outside_source(f"S{number}", path, line, line + count - 1, text, symbol=symbol))
        line += count + 5  # apart: one run per source
    return out


def _claims(raw: str, sources: list[Source]) -> list[Any]:
    result = verify(raw, sources)
    assert isinstance(result, GatePassed), raw
    return [span for span in json.loads(raw)["spans"] if span["kind"] == "claim"]


def test_the_statements_deciding_the_source_lead_not_the_docstring_of_its_getter() -> None:
    # Ranked as search ranks them for click: the getter first, the enum, consume_value third.
    sources = _sources(
        ("click/core.py", "Context.get_parameter_source", GET_SOURCE),
        ("click/types.py", "ParameterSource", SOURCE_ENUM),
        ("click/params.py", "Parameter.consume_value", CONSUME),
    )
    question = "How does click decide which parameter source a value came from?"
    claims = _claims(answer(question, sources, STRONG), sources)
    first = claims[0]["citations"][0]
    assert first["source"] == "S3", claims
    assert (
        "source = ParameterSource." in first["quote"]
        or "ParameterSource.COMMANDLINE" in (first["quote"])
    )
    quoted = "\n".join(c["quote"] for claim in claims for c in claim["citations"])
    assert ":param name:" not in quoted and ":rtype:" not in quoted


# The whole Group, or the middle of Group.invoke as retrieval may give it (its signature in
# another chunk): the code reading the name the question types leads either way.
CUT_INVOKE = "\n".join(GROUP.split("\n")[10:]) + "\n"


@pytest.mark.parametrize(
    "symbol,text", [("Group", GROUP), ("Group.invoke", CUT_INVOKE)], ids=["whole", "cut body"]
)
def test_a_name_typed_like_code_is_answered_from_the_code_that_reads_it(
    symbol: str, text: str
) -> None:
    sources = _sources(
        ("click/core.py", "Context.invoke", CONTEXT_INVOKE),
        ("click/group.py", symbol, text),
    )
    claims = _claims(answer("What does invoke_without_command do?", sources, STRONG), sources)
    first = claims[0]["citations"][0]
    assert first["source"] == "S2" and "if self.invoke_without_command:" in first["quote"], claims


def test_what_something_is_is_still_answered_by_its_definition_and_doc() -> None:
    sources = _sources(
        ("click/core.py", "Context.get_parameter_source", GET_SOURCE),
        ("click/params.py", "Parameter.consume_value", CONSUME),
    )
    raw = answer("What is get_parameter_source?", sources, STRONG)
    first = _claims(raw, sources)[0]["citations"][0]
    assert first["source"] == "S1" and "def get_parameter_source(" in first["quote"]


def test_a_word_the_code_does_not_say_is_no_refusal_when_retrieval_found_the_code() -> None:
    # "applied" is nowhere in the code: the old missing-word rule refused this question.
    sources = _sources(("click/params.py", "Parameter.consume_value", CONSUME))
    question = "How are environment variable values applied to a parameter?"
    claims = _claims(answer(question, sources, STRONG), sources)
    assert claims and claims[0]["citations"][0]["source"] == "S1"


def test_weak_evidence_is_refused_whatever_the_lines_say() -> None:
    sources = _sources(("click/params.py", "Parameter.consume_value", CONSUME))
    question = "How does the parameter source value get refreshed from OAuth?"
    assert _claims(answer(question, sources, STRONG), sources)  # the lines match well enough
    weak = Evidence(relevance=OFFLINE_FLOOR - 0.05, named=False)
    assert isinstance(verify(answer(question, sources, weak), sources), GateRefusedByModel)


def _result(text: str, score: float, defines: tuple[str, ...] = ()) -> Result:
    return result("a.py", 1, text.count("\n") + 1, text, score, defines=defines)


def test_evidence_is_the_best_relevance_and_the_names_the_question_gives() -> None:
    plain = _result("def helper():\n    return 1", 0.5, ("helper",))
    assert gather("How are OAuth tokens refreshed?", [plain]) == Evidence(0.5, False)
    assert not gather("How are OAuth tokens refreshed?", [plain]).answers
    strong = _result("x = 1", OFFLINE_FLOOR)
    assert gather("How are tokens refreshed?", [plain, strong]).answers
    # A definition the question names, typed as it is or word for word.
    named = _result("def consume_value(self):\n    pass", 0.3, ("consume_value",))
    assert gather("Where does consume_value look?", [named]).named
    bypass = _result("def should_bypass_proxies(url):\n    pass", 0.3, ("should_bypass_proxies",))
    assert gather("When should a URL bypass the proxies?", [bypass]).named
    # A name typed like code that a source uses (an attribute, not a definition).
    reads = _result("if self.invoke_without_command:\n    pass", 0.3)
    assert gather("What does invoke_without_command do?", [reads]).named
    assert not gather("What does invoke_without do?", [reads]).named


CHOICE = '''class PrefixLoader(BaseLoader):
    def get_loader(self, template):
        """Find the loader for a prefixed template name."""
        try:
            prefix, name = template.split(self.delimiter, 1)
            loader = self.mapping[prefix]
        except (ValueError, KeyError) as e:
            raise TemplateNotFound(template) from e
        self.loaders_tried.append(loader)
        return loader, name


class ChoiceLoader(BaseLoader):
    def get_source(self, environment, template):
        for loader in self.loaders:
            try:
                return loader.get_source(environment, template)
            except TemplateNotFound:
                pass
        raise TemplateNotFound(template)
'''


def test_a_methods_class_says_what_it_is_about() -> None:
    # `get_source` says none of the question; its class `ChoiceLoader` does.
    sources = _sources(("jinja2/loaders.py", None, CHOICE))
    question = "How does the choice loader try several loaders in order?"
    first = _claims(answer(question, sources, STRONG), sources)[0]["citations"][0]
    assert 15 <= first["start_line"] <= 20, first  # ChoiceLoader.get_source's body


CASELESS = """class CaseInsensitiveDict(MutableMapping):
    def __getitem__(self, key):
        return self._store[key.lower()][1]

    def __eq__(self, other):
        if isinstance(other, Mapping):
            other = CaseInsensitiveDict(other)
        else:
            return NotImplemented
        return dict(self.lower_items()) == dict(other.lower_items())
"""


def test_a_named_class_names_its_methods_and_building_one_is_no_reading_of_it() -> None:
    sources = _sources(("requests/structures.py", "CaseInsensitiveDict", CASELESS))
    claims = _claims(answer("How does CaseInsensitiveDict look up keys?", sources, STRONG), sources)
    assert claims[0]["citations"][0]["quote"] == "        return self._store[key.lower()][1]"


AFTER = '''def after_this_request(f):
    """Executes a function after this request.  This is useful to modify
    response objects.
    """
    ctx = _cv_request.get(None)
    if ctx is None:
        raise RuntimeError("not in a view")
    ctx._after_request_functions.append(f)
    return f
'''
DOCS = """As an alternative, you can use after_this_request to register
callbacks that will execute after only the current request.
"""


def test_a_named_subjects_statements_lead_when_they_say_one_of_its_words() -> None:
    # The body says only "request"; before, a window needed two of the question's terms and the
    # answer quoted the docs page instead of the function the question names.
    sources = _sources(
        ("docs/deferred.rst", None, DOCS),
        ("flask/ctx.py", "after_this_request", AFTER),
    )
    question = "How does after_this_request register a callback for the current request only?"
    first = _claims(answer(question, sources, STRONG), sources)[0]["citations"][0]
    assert (
        first["source"] == "S2" and first["start_line"] >= sources[1].result.chunk.start_line + 4
    ), first


CHECK = """def _check(cite, entry):
    needle = normalise(cite.quote)
    if not needle:
        return "empty_quote"
    problem = quote_problem(cite.quote, entry.lines)
    return problem
"""
RULE = '''def quote_problem(quote, lines):
    """The quote rule: why the quote does not hold on exactly these lines."""
    needle = normalise(quote)
    if not needle:
        return "empty_quote"
    return None if needle in " ".join(lines) else "quote_not_held"
'''


CHECK_QUOTE = '''def check_quote(path, start_line, quote, text):
    """Where ``quote`` is in ``text`` (the file's current content) relative to the cited lines."""
    cited = Citation(path=path, start_line=start_line, quote=quote)
    found = nearest_match(split_lines(text), quote, start_line)
    return Verdict(cited, found)
'''


def test_statements_are_claimed_without_a_docstring_sentence_the_quote_does_not_show() -> None:
    # The claim once carried the docstring sentence although only body lines were quoted; the
    # gate removed it ("the claim says 'in', 'is'") and the user read "1 statement could not be
    # verified against the code and was removed".
    sources = _sources(("mcp/verify.py", "check_quote", CHECK_QUOTE))
    raw = answer("How does check_quote match a quote?", sources, STRONG)
    assert isinstance(verify(raw, sources), GatePassed)  # nothing removed
    claims = [span for span in json.loads(raw)["spans"] if span["kind"] == "claim"]
    assert claims and all("Where ``quote``" not in claim["text"] for claim in claims)


def test_the_function_a_subject_calls_to_do_the_work_is_quoted_too() -> None:
    # `_check` hands the quote to `quote_problem`: the callee's statements are among the leads.
    sources = _sources(("verify/gate.py", "_check", CHECK), ("verify/quotes.py", None, RULE))
    claims = _claims(answer("How does the citation gate check a quote?", sources, STRONG), sources)
    assert any(c["citations"][0]["source"] == "S2" for c in claims), claims


CHANGED = '''class LoopContext:
    def changed(self, *value):
        """Return True if previously called with a different value."""
        if self._last_changed_value != value:
            self._last_changed_value = value
            return True
        return False
'''
PEEK = '''class LoopContext:
    def _peek(self):
        """Whether this is the last iteration of the loop: no item follows."""
        return self._after is self._last_seen
'''


def test_the_definition_whose_docstring_says_the_question_leads_with_its_statements() -> None:
    # `changed` says "last" on more lines; `_peek`'s docstring says what is asked.
    sources = _sources(
        ("jinja2/runtime.py", "LoopContext.changed", CHANGED),
        ("jinja2/runtime.py", "LoopContext._peek", PEEK),
    )
    question = "How does the loop know whether it is on the last iteration?"
    first = _claims(answer(question, sources, STRONG), sources)[0]["citations"][0]
    assert first["source"] == "S2" and "return self._after is self._last_seen" in first["quote"]


CACHE_DOC = """# Caching

The cache evicts the oldest entries once it holds more than its capacity.
Entries are kept in a queue; reading an entry moves it to the back of the queue.
"""
SET_ITEM = """class LRUCache:
    def __setitem__(self, key, value):
        if key in self._mapping:
            self._remove(key)
        elif len(self._mapping) >= self.capacity:
            del self._mapping[self._queue.popleft()]
        self._queue.append(key)
        self._mapping[key] = value
"""
GET_ITEM = """class LRUCache:
    def __getitem__(self, key):
        rv = self._mapping[key]
        if self._queue[-1] != key:
            self._queue.remove(key)
            self._queue.append(key)
        return rv
"""


def test_the_statements_of_the_likeliest_subjects_lead_best_ranked_first() -> None:
    sources = _sources(
        ("docs/cache.md", None, CACHE_DOC),
        ("jinja2/utils.py", "LRUCache.__setitem__", SET_ITEM),
        ("jinja2/utils.py", "LRUCache.__getitem__", GET_ITEM),
    )
    question = "How does the LRU cache evict old entries and keep its queue?"
    claims = _claims(answer(question, sources, STRONG), sources)
    cited = [claim["citations"][0]["source"] for claim in claims]
    # Retrieval ranked `__setitem__` above `__getitem__`, which says the question on more lines.
    assert cited[0] == "S2", claims
    # The runner-up's statements are quoted too, not only the docs page.
    assert "S3" in cited, claims


LOOP = (
    CHANGED
    + '''
    @property
    def last(self):
        """Whether this is the last iteration of the loop."""
        return self._peek_next() is missing

    def cycle(self, *args):
        return args[self.index0 % len(args)]
'''
)
LAST = "How does the loop know whether it is on the last iteration?"


def test_a_short_body_saying_none_of_the_question_is_quoted_when_its_doc_says_it() -> None:
    # `last`'s one statement says no word of the question; its name and docstring do.
    sources = _sources(("jinja2/runtime.py", "LoopContext", LOOP))
    first = _claims(answer(LAST, sources, STRONG), sources)[0]["citations"][0]
    assert first["quote"].strip() == "return self._peek_next() is missing", first


ABSTRACT = '''class BaseLoop:
    def last(self):
        """Whether this is the last iteration of the loop.

        Subclasses say how they know it: a sequence by its length,
        an iterator by peeking at the next item.
        """
        raise NotImplementedError

    def reset(self):
        self.index0 = 0
'''


def _quoted(question: str, sources: list[Source]) -> list[str]:
    claims = _claims(answer(question, sources, STRONG), sources)
    return [citation["quote"] for claim in claims for citation in claim["citations"]]


def test_an_abstract_body_is_no_working_code() -> None:
    quoted = _quoted(LAST, _sources(("loops.py", "BaseLoop", ABSTRACT)))
    assert quoted and all("NotImplementedError" not in quote for quote in quoted), quoted


CUT_LAST = '''class BaseLoop:
    def last(self):
        """Whether this is the last iteration of the loop.

        Asks the iterator for one more item, then keeps it for the next
        round, so that nothing is lost.
        """
        iterator = self._iterator
'''


def test_a_body_cut_where_the_retrieved_lines_end_is_not_taken_for_the_whole() -> None:
    # The chunk stops after the first statement: the rest, which does the work, is not here.
    quoted = _quoted(LAST, _sources(("loops.py", "BaseLoop.last", CUT_LAST)))
    assert quoted and all("iterator = self._iterator" not in quote for quote in quoted), quoted


TRUNCATE = '''def do_truncate(env, s, length=255, killwords=False, end="...", leeway=None):
    """Return a truncated copy of the string. The length is specified
    with the first parameter which defaults to ``255``.
    """
    if leeway is None:
        leeway = env.policies["truncate.leeway"]
    if len(s) <= length + leeway:
        return s
    result = s[: length - len(end)].rsplit(" ", 1)[0]
    return result + end
'''


def test_statements_saying_one_word_answer_when_their_definition_says_more() -> None:
    # The body says only "truncate"; the docstring says "string", the name "truncate": the
    # question's words meet in one place, the definition, so its statements lead.
    sources = _sources(("jinja2/filters.py", "do_truncate", TRUNCATE))
    question = "How does the truncate filter cut long strings?"
    first = _claims(answer(question, sources, STRONG), sources)[0]["citations"][0]
    assert first["start_line"] >= sources[0].result.chunk.start_line + 4, (
        first
    )  # the body, not the docstring


CLIENT_ROTATE = """export class KeyvaultClient {
  /** Ask the server to rotate the caller's API key. */
  async rotateKey(client: string): Promise<RotateResponse> {
    const response = await fetch(`${this.baseUrl}/clients/${client}/rotate`, {
      method: "POST",
    });
    if (!response.ok) {
      throw new Error(`rotation failed: ${response.status}`);
    }
    return (await response.json()) as RotateResponse;
  }
}
"""
SERVER_ROTATE = '''def rotate_key(store, client, now):
    """Rotate a client's API key: issue a new key and retire the old one."""
    old = store.current(client)
    old.retired_at = now
    fresh = new_key(now)
    store.add(client, fresh)
    return fresh
'''


def test_a_function_saying_the_question_only_in_messages_and_urls_does_not_lead() -> None:
    # The client says "rotate" in a URL and an error message, on more lines than the server's
    # function that does it: those lines do not overturn retrieval's order.
    sources = _sources(
        ("keyvault/keys.py", "rotate_key", SERVER_ROTATE),
        ("web/src/client.ts", "KeyvaultClient", CLIENT_ROTATE),
    )
    first = _claims(answer("How are API keys rotated?", sources, STRONG), sources)[0]
    assert first["citations"][0]["source"] == "S1", first


JINJA_SANDBOX = json.loads(
    (Path(__file__).parents[2] / "fixtures" / "offline" / "jinja_sandbox.json").read_text("utf-8")
)


def test_words_said_only_in_a_message_are_no_evidence_of_doing_it() -> None:
    # jinja's sandbox, as retrieval gave it: `unsafe_undefined` says "access" only in the
    # message it builds ("access to attribute ... is unsafe"), and that message led the answer
    # before the checks that block the access.
    sources = [outside_source(**source) for source in JINJA_SANDBOX["sources"]]
    first = _claims(answer(JINJA_SANDBOX["question"], sources, STRONG), sources)[0]
    quote = first["citations"][0]["quote"]
    assert "access to attribute" not in quote, first
    assert "UNSAFE_FUNCTION_ATTRIBUTES" in quote or "unsafe_undefined" in quote, first
