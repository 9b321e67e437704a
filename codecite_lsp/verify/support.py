"""Support, not just presence (pure): a claim may say only what its quoted lines show.

A quote that holds verbatim proves the lines exist, not that the claim is true. This module
checks the part of a claim that can be checked without a model: its specific content.

- Code names (``snake_case``, ``camelCase``, ``a.b`` chains, ``name()`` calls, ``True``, ``None``,
  anything in backticks), numbers (digits and the words two..twelve), quoted literals (``'sure'``),
  option names (``--help``) and paths must appear in the cited lines, the quotes, or the cited
  source's symbol and path (a claim may name the function whose body it quotes). The question's
  own names, options and paths are given (its example ``--shout/--no-shout``), but not its
  literals, constants, numbers or quantifiers: those are what a claim asserts. A count ("three
  times") is shown by as many citations, one per place counted.
- Quantifiers ("always", "never", "only", "every", "all", "none") need the word, or its code
  form, in the evidence; a negation ("not", "cannot", "doesn't", "without") needs some negation
  there ("not", "!", "False", "raise", ...). A model that flips a claim writes these words; the
  code that would support them says so.
- Evidence is narrow: a citation whose range is wider than its quote is cut to the quote's
  lines and 4 either side, so a 48-line range cannot lend its other lines to a claim; the cut
  keeps the rest of the statement the quote begins (``default=`` with its value on the next
  line), and the call or condition just above a quoted line.
- A whole-line quote is evidence only when the line holds something besides punctuation and
  block words (a lone ``)``, ``}`` or ``else:`` shows nothing).

What it cannot see is meaning stated in plain words ("the adapter strips the header" when the
session does): that is the model's responsibility and the documented limit of a verified chip.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..core.terms import COUNT_WORDS, word_pattern
from ..ingest.languages import LANGUAGES
from .quotes import normalise_ws, quote_ranges

MAX_EXTRA_LINES = 4  # context lines a citation may hold beyond its quote before it is cut


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_BACKTICKED = re.compile(r"`([^`\n]+)`")
_LITERAL = re.compile(  # 'x', "x", and the typographic pairs \u201cx\u201d, \u2018x\u2019
    r"""(?<![\w'])'([^'\n]{1,80})'(?![\w])|"([^"\n]{1,80})"|"""
    "\u201c([^\u201d\n]{1,80})\u201d|\u2018([^\u2019\n]{1,80})\u2019"
)
# An option starts a word: "%-formatted" or "non-empty" name none.
_OPTION = re.compile(r"(?<![^\s(\[{`'\"/,])--?[A-Za-z][\w-]*")
_PATH = re.compile(
    r"(?<![\w/.])(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:py|pyi|js|mjs|ts|tsx|go|rs|c|h|cpp|java|rb|md|"
    r"rst|txt|json|toml|yaml|yml|cfg|ini|lock|sh)\b"
)
_NAME_WORD = re.compile(r"(?<![\w$])[A-Za-z_$][\w$]*")  # not the "o777" of 0o777
_RADIX = re.compile(r"\b0[xXoObB][0-9a-fA-F_]+\b")  # 0o777, 0xFF: a value, like a name
_CHAIN = re.compile(r"\b[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?:\(\))?")
_CALL = re.compile(r"\b([A-Za-z_$][\w$]*)\(\)")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]?\w)")
_CUT_OFF = re.compile(r"[\w.$]*(?:\.\.\.|…)")  # a word cut short by an ellipsis names nothing
_CONSTANTS = _words("True False None nil null undefined NaN")

# Claim word -> evidence that supports it (words, matched case-insensitively, or code forms).
_UNIVERSAL = ("every", "all", "each", "any", "for", "forEach", "map", "range", "while")
_QUANTIFIERS: dict[str, tuple[str, ...]] = {
    "always": ("always",),
    "never": ("never",),
    "only": ("only", "solely", "just", "unless", "except"),
    "every": _UNIVERSAL,
    "all": _UNIVERSAL,
    "none": ("none", "no", "not", "never", "nothing"),
}
# "only when X" is how a condition is said: the condition in code supports it.
_ONLY_WHEN = re.compile(r"\bonly\s+(?:\w+\s+){0,2}?(?:when|if|unless|while|after|before|once)\b")
_CONDITIONS = ("if", "elif", "when", "case", "unless", "filter", "where")
_STRICT_NEGATIONS = _words("not no never cannot without unless neither nor nothing Not No Never")
_NEGATED_FAILURE = re.compile(
    r"\b(?:not|never|no|without|n't)\s+(?:\w+\s+)?(?:raise|raising|throw|throwing|error|fail"
    r"|failing|abort|aborting|exception|reject|rejecting)",
    re.IGNORECASE,
)
_NEGATIONS = _words("not no cannot without nothing neither nor nobody nowhere")
# A negation the claim asserts sits in its main clause: one in a condition or a description
# ("when X is not given", "a value that is not iterable") says when, not what; a bare "not"
# ("values not consumed") describes; "is not", "does not", "cannot" assert.
_SUBORDINATE = _words(
    "when whenever if unless whether that which who whose whom where while until because since "
    "once although though whereas"
)
_AUXILIARIES = _words(
    "is are was were be been am does do did will would can could should shall must may might has "
    "have had"
)
_CLAUSE_BREAK = re.compile(r"[,;:()\u2014]")
_WORDING = frozenset(COUNT_WORDS) | frozenset(_QUANTIFIERS) | _NEGATIONS  # judged, not located
_NEGATION_EVIDENCE = _words(
    """not no never none nothing cannot without neither nor unless except false nil null
    undefined raise raises raised throw throws error errors reject rejects refuse refuses
    disable disabled skip skips ignore ignores deny denied fail fails failed missing empty
    invalid abort pass"""
)


MAX_STATEMENT_LINES = 8  # lines a statement the quote starts may run on after the quote
_OPENS, _CLOSES = "([{", ")]}"
_CONTINUES = ("\\", ",", "(", "[", "{", "=", "+", "-", "*", "/", " and", " or")


def _statement_end(lines: list[str], last: int) -> int:
    """The index of the line ending the statement that line ``last`` is in the middle of: its
    brackets closed and no continuation at its end (a keyword's value on the next line)."""
    depth = 0
    for index, line in enumerate(lines[last:], start=last):
        depth += sum(line.count(ch) for ch in _OPENS) - sum(line.count(ch) for ch in _CLOSES)
        ends = line.rstrip()
        if (depth <= 0 and not ends.endswith(_CONTINUES)) or index - last >= MAX_STATEMENT_LINES:
            return index
    return len(lines) - 1


def narrowed(cited: list[str], quote: str, start: int, end: int) -> tuple[int, int]:
    """The citation's range, cut to the quote's lines (first occurrence) and up to
    ``MAX_EXTRA_LINES`` either side when it is wider, and down to the end of the statement the
    quote's last line begins (a value on the next line stays): the call a quoted argument is in,
    the ``if`` above a quoted body stay; ``cited`` are the lines start..end, which hold the
    quote."""
    spots = quote_ranges(cited, quote)
    if not spots:
        return start, end
    first, last = spots[0]
    last = max(min(last + MAX_EXTRA_LINES, len(cited)), _statement_end(cited, last - 1) + 1)
    first = max(1, first - MAX_EXTRA_LINES)
    return start + first - 1, start + last - 1


REACH_LINES = 1  # lines beyond a citation a name its claim gives may sit on: the range grows


def reached(
    lines: list[str], first: int, start: int, end: int, quote: str, terms: Iterable[str]
) -> tuple[int, int]:
    """The cited range ``start..end`` grown to the nearest line within ``REACH_LINES`` that holds
    each of the claim's missing ``terms`` (names, literals, numbers, paths, options: never its
    wording), never past the ``MAX_EXTRA_LINES`` a range may hold beyond its quote: a citation
    one line short of the ``default_encoding`` it names then shows it. ``lines`` are the
    source's lines, the first numbered ``first``; start..end hold ``quote``."""
    spots = quote_ranges(lines[start - first : end - first + 1], quote)
    if not spots:
        return start, end
    low = max(first, start - REACH_LINES, start + spots[0][0] - 1 - MAX_EXTRA_LINES)
    high = min(first + len(lines) - 1, end + REACH_LINES, start + spots[0][1] - 1 + MAX_EXTRA_LINES)
    for term in terms:
        if term.lower() in _WORDING or term.lower().endswith("n't"):
            continue
        quoted = len(term) > 1 and term[0] in "'\"" and term[-1] == term[0]
        pattern = word_pattern(term[1:-1] if quoted else term)
        holding = [n for n in range(low, high + 1) if pattern.search(lines[n - first])]
        if holding and not any(start <= n <= end for n in holding):
            nearest = min(holding, key=lambda n: min(abs(n - start), abs(n - end)))
            start, end = min(start, nearest), max(end, nearest)
    return start, end


def _any_of(words: Iterable[str]) -> str:
    return "|".join(sorted(set(words), key=lambda word: (-len(word), word)))


# A definition's header in any language (the known lines come without one): its modifiers,
# then the keyword that opens it (`def`, `fn`, `class` ...), from the language table.
_DEFINITION = re.compile(
    rf"\s*(?:(?:{_any_of(m for lang in LANGUAGES.values() for m in lang.modifiers)})\s+)*"
    rf"(?:{_any_of(w for lang in LANGUAGES.values() for w in lang.definition_words)})\b"
)
# A method header without a keyword (Java, C#, TypeScript, C++): modifiers, a return type, its
# name, parameters, the block's opening brace: `async rotateKey(client: string): P<R> {`,
# `public boolean serializeNulls() {`. Never a statement opening a block (`if (x) {`).
_METHOD = re.compile(
    r"\s*(?!(?:return|new|else|throw|await|yield|case|go|defer)\b)(?:[\w<>\[\],.?*&:]+\s+)*?"
    r"(?!(?:if|for|while|switch|catch|return|new|else|do|try|using|lock|foreach|with|await|throw|"
    r"synchronized|when|match|sizeof|typeof|delete|yield|case|assert)\b)"
    r"[A-Za-z_$][\w$]*\s*(?:<[^()]*>)?\s*\([^;]*\)\s*(?:(?::|->|throws\b)[^;{]*)?\{\s*$"
)

# A function given to a name or a property: `res.send = function send(body) {`,
# `export const rotateKey = async (key: string): Promise<void> => {`.
_FUNCTION_VALUE = re.compile(
    r"\s*(?:export\s+)?(?:(?:const|let|var)\s+)?[\w$.]+\s*(?::[^=]+)?=\s*(?:async\s+)?"
    r"(?:function\b|(?:\([^)]*\)?|[\w$]+)\s*(?::[^=]+)?=>)"
)


def enclosing_definition(known: dict[int, str], line: int) -> str:
    """The nearest definition line above ``line`` among a file's known lines (number -> text),
    less indented than it: a claim may name the function whose body it quotes, and its header
    may sit in the chunk before."""
    for number, text in _openers(known, line):
        if _is_definition(text):
            return _header(known, number)
    return ""


def enclosing_headers(known: dict[int, str], line: int, most: int = 4) -> list[str]:
    """The headers of the blocks ``line`` is in, outermost first, up to its definition's: the
    ``if WIN:`` a quoted ``os.startfile(url)`` runs under is part of what the line says."""
    headers = [text.strip() for _, text in _openers(known, line) if text.lstrip()[0] not in ")]}"]
    return headers[:most][::-1]


def _is_definition(text: str) -> bool:
    return bool(_DEFINITION.match(text) or _METHOD.match(text) or _FUNCTION_VALUE.match(text))


def _openers(known: dict[int, str], line: int) -> Iterable[tuple[int, str]]:
    """Each known line above ``line`` less indented than the lines below it, innermost first,
    ending at a definition, at top-level code, or at a line no source holds."""
    own = known.get(line, "")
    indent = len(own) - len(own.lstrip())
    expected = line - 1
    for number in sorted((n for n in known if n < line), reverse=True):
        if number != expected:  # lines no source holds: what is above may be another block's
            return
        expected = number - 1
        text = known[number]
        depth = len(text) - len(text.lstrip())
        if not text.strip() or depth >= indent:
            continue
        yield number, text
        if _is_definition(text):
            return
        if text.lstrip()[0] in ")]}":  # a multi-line signature's end, its header above
            continue
        if depth == 0:  # top-level code that is no definition: nothing encloses the line
            return
        indent = depth  # an enclosing block: its own scope is what encloses it


def _header(known: dict[int, str], first: int, most: int = 12) -> str:
    """A definition's header from its first line to the line that ends it (a multi-line
    signature holds the parameters and the return type a claim may name)."""
    lines = []
    for number in range(first, first + most):
        text = known.get(number)
        if text is None:
            break
        lines.append(text)
        if text.rstrip().endswith((":", "{", ";")) or "=>" in text:
            break
    return "\n".join(lines)


@dataclass(frozen=True)
class Evidence:
    """What one claim rests on: its quotes, its cited lines, and the cited sources' names."""

    text: str  # quotes and cited lines
    names: str = ""  # symbols and paths of the cited sources
    line_numbers: frozenset[int] = frozenset()  # "line 54" names the citation, not the code
    asked: str = ""  # the question: the names, options and paths it gives are given
    quotes: int = 0  # the claim's citations: "three times" is shown by three quoted places
    # The headers of the blocks the cited lines run in (`if WIN:`, a docstring's `ncols : int`
    # entry): the names they give, like the question's, never a value or a quantifier (the
    # `True` of `while True:`, the `for` of a loop).
    headers: str = ""

    def _all(self, asked: bool = True) -> str:
        given = f"\n{self.asked}\n{self.headers}" if asked else ""
        return f"{self.text}\n{self.names}{given}"

    def has_word(self, word: str, case: bool = True, asked: bool = True) -> bool:
        """The word in the evidence; ``asked``: or in the question (a name it gives), never for
        what the claim asserts of it (a quantifier, a count, a constant such as False)."""
        flags = 0 if case else re.IGNORECASE
        return word_pattern(word, flags).search(self._all(asked)) is not None

    def has_part(self, name: str) -> bool:
        """A name without underscores that is a part of a longer one in the evidence: a
        capitalised one at its start ("PowerShell" of ``PowerShellComplete``), or one between
        underscores in any case ("IPv4" of ``is_ipv4_hostname``)."""
        if "_" in name:
            return False
        text, escaped = self._all(False), re.escape(name)
        if name[:1].isupper() and re.search(rf"(?<![\w$]){escaped}(?=[A-Z_\d])", text):
            return True
        parts = rf"(?<![A-Za-z0-9$])(?:{escaped}(?=_)|(?<=_){escaped}(?![A-Za-z0-9$]))"
        return re.search(parts, text, re.IGNORECASE) is not None

    def has_text(self, text: str) -> bool:
        return normalise_ws(text) in normalise_ws(self._all())

    def has_literal(self, text: str) -> bool:
        """The literal whole, not inside a longer word ('Authorization' is not in
        "Proxy-Authorization")."""
        needle = re.escape(normalise_ws(text))  # never given by the question: a value asserted
        return (
            re.search(rf"(?<![\w-]){needle}(?![\w-])", normalise_ws(self._all(False))) is not None
        )

    def has_number(self, digits: str) -> bool:
        """The number written in the evidence, or counted by it: as many citations as it says
        (a count is never written in code; computing one, "the last 7" of ``[-6:] + [x]``, is
        the model's arithmetic and is not shown)."""
        if digits.isdigit() and (int(digits) in self.line_numbers or int(digits) == self.quotes):
            return True
        # "5 seconds" is the ``5.0`` of the code: the same value.
        return float(digits) in {float(n) for n in re.findall(r"\d+(?:\.\d+)?", self.text)}

    def has_negation(self, of_failure: bool = False) -> bool:
        """Some negation in the evidence; for a claim that something does *not* fail ("does not
        raise"), a raise or an error in the evidence is the opposite, not a negation."""
        text = self.text
        if "!" in text or "n't" in text.lower():
            return True
        if of_failure:  # only an explicit negation: None, False or a raise say nothing here
            return any(word in _STRICT_NEGATIONS for word in _WORD.findall(text))
        return any(word.lower() in _NEGATION_EVIDENCE for word in _WORD.findall(text))


def _is_code_name(word: str) -> bool:
    return (
        ("_" in word.strip("_") and any(ch.isalpha() for ch in word))
        or re.search(r"[a-z][A-Z]", word) is not None
        or re.fullmatch(r"[A-Z][a-z]+[A-Z]\w*", word) is not None
        or word in _CONSTANTS
        or "$" in word
        or re.fullmatch(r"[A-Za-z]+\d+[A-Za-z\d]*", word) is not None  # hunter2, sha256, utf8
    )


def _names_in(text: str) -> Iterable[str]:
    """The code names a piece of claim text uses; of an ``a.b.c`` chain only the last part must
    be shown (the qualifier is where it lives, often outside the cited lines)."""
    for chain in _CHAIN.findall(text):
        parts = chain.removesuffix("()").split(".")
        if all(len(part) <= 1 for part in parts):  # "e.g", "i.e"
            continue
        yield parts[-1]
    yield from _CALL.findall(text)
    yield from _RADIX.findall(text)
    for word in _NAME_WORD.findall(_CHAIN.sub(" ", text)):
        if _is_code_name(word):
            yield word


def missing(claim: str, evidence: Evidence, wording: bool = True) -> list[str]:
    """The claim's specific content that the evidence does not show, in the claim's words;
    empty when the claim is supported as far as a deterministic check can tell. ``wording``
    False: counts in words, quantifiers and negations are left to the model's support check
    (answer/support_check.py), which reads them in context; on their own, these word rules
    refused a quarter of the true claims of a held-out set."""
    absent: list[str] = []
    claim = _CUT_OFF.sub(" ", claim)

    def lack(term: str) -> None:
        if term not in absent:
            absent.append(term)

    for inner in _BACKTICKED.findall(claim):
        if evidence.has_text(inner.removesuffix("()")):
            continue
        for word in _WORD.findall(_CHAIN.sub(" ", inner)):
            if not evidence.has_word(word):
                lack(word)
        for name in _names_in(inner):
            if not evidence.has_word(name):
                lack(name)
    prose = _BACKTICKED.sub("§", claim)  # no word: "`/`-separated" starts no option
    for groups in _LITERAL.findall(prose):
        literal = next(group for group in groups if group)
        if not evidence.has_literal(literal):
            lack(repr(literal))
    prose = _LITERAL.sub(" ", prose)
    for path in (found.rstrip(".") for found in _PATH.findall(prose)):  # a sentence's full stop
        if not (evidence.has_text(path) or evidence.has_text(path.rsplit("/", 1)[-1])):
            lack(path)
    prose = _PATH.sub(" ", prose)
    for option in _OPTION.findall(prose):
        if not evidence.has_text(option):
            lack(option)
    prose = _OPTION.sub(" ", prose)  # the "no" of --no-shout is no negation
    for name in _names_in(prose):
        constant = name in _CONSTANTS  # asserted, never given; "null bytes" of "Null bytes"
        if not (evidence.has_word(name, not constant, not constant) or evidence.has_part(name)):
            lack(name)
    for number in _NUMBER.findall(prose):
        if not evidence.has_number(number):
            lack(number)
    words = [word.lower() for word in _PROSE_WORD.findall(prose)] if wording else []
    negated = _asserted_negations(prose) if wording else frozenset()
    for word in words:
        if word in COUNT_WORDS:
            shown = evidence.has_number(str(COUNT_WORDS[word]))
            if not (shown or evidence.has_word(word, False, asked=False)):
                lack(word)
        elif word in _QUANTIFIERS:
            if not _quantifier_shown(word, prose, evidence):
                lack(word)
        elif word in negated and not evidence.has_negation(
            _NEGATED_FAILURE.search(prose) is not None
        ):
            lack(word)
    absent.sort(key=lambda term: claim.find(term.strip("'")))
    return absent


_PROSE_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")


def _asserted_negations(prose: str) -> frozenset[str]:
    """The negation words the claim asserts (lower case): in a main clause, and a "not" only
    after an auxiliary ("is not", "does not"; "doesn't" and "cannot" always)."""
    asserted = set()
    for clause in _CLAUSE_BREAK.split(prose):
        words = [word.lower() for word in _PROSE_WORD.findall(clause)]
        for index, word in enumerate(words):
            if not (word in _NEGATIONS or word.endswith("n't")):
                continue
            if any(before in _SUBORDINATE for before in words[:index]):
                continue
            near = words[max(0, index - 2) : index]  # "is still not"
            if word == "not" and not any(before in _AUXILIARIES for before in near):
                continue
            asserted.add(word)
    return frozenset(asserted)


def _quantifier_shown(word: str, claim: str, evidence: Evidence) -> bool:
    if any(evidence.has_word(form, False, asked=False) for form in _QUANTIFIERS[word]):
        return True
    if word != "only":
        return False
    when = _ONLY_WHEN.search(claim.lower()) is not None
    return when and any(evidence.has_word(form, False, asked=False) for form in _CONDITIONS)
