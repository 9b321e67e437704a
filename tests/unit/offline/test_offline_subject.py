"""An offline answer points at the working code: the statements of the definition the question
is about, not its docstring; and it refuses only on retrieval's evidence, not on a missing word.
The fixtures are cut down from click's core.py (the questions of issue 21)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from codecite_lsp.core.records import Result, Source
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
        out.append(Source(f"S{number}", path, line, line + count - 1, text, symbol=symbol))
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
    return Result("a.py", 1, text.count("\n") + 1, None, score, "h", text, defines=defines)


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
