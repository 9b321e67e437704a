"""What a reply may say without a citation (pure): framing prose and "the sources do not show X".

Prose carries no facts. A prose span is connecting words and framing ("Here's how it works:",
"**Summary**", "Let me walk through the code."), so its rule is a
closed vocabulary: function words and words about the answer itself (lines, sources, steps,
summary, below), at least one of which frames (a bare "It does." is an answer, not framing).
Markdown emphasis and heading marks around it are layout, not code. Anything else (a name, a
number, a path, code, a noun about the code such as "SQLite" or "database") states something about
the repository and is an uncited claim. Polarity words ("not", "never", "always", "only", "yes",
"no") are left out of the vocabulary: "It does not." answers a question with nothing to back it.
One leniency: an opener shaped as one (ending in a colon, a heading, or starting "Here's"/"Let
me") may repeat the question's own words inside an embedded question ("Here's how Click handles
this:", "## How `confirm` reads the answer"): it announces what the user asked about without
asserting it ("Requests does strip the header:" is a claim), and the claims that follow carry the
facts.

A gap span says what the sources do not show. It names what is missing and asserts nothing: one
clause, no continuation (", which it does", ", but ...", "because ..."), not "that X" (which
states X); a question ("how ...", "whether ...") or the name of what is missing (then without a
finite verb or a quantifier: "the refresh schedule", not "the refresh job is hourly"). Every name
it uses comes from the question or the sources (identifiers split into their words): ordinary
words may describe what is missing, but a name (an identifier, a capitalised word, a number) says
the thing exists, so a gap cannot presuppose one no source mentions ("how Click's SQLite cache is
invalidated"). Line numbers ("line 42", "lines 10-20", "L42") name a place and are allowed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable

from ..core.terms import COUNT_WORDS

MAX_PROSE_CHARS = 160
MAX_PROSE_WORDS = 24
MAX_GAP_CHARS = 200


class Undecided(Exception):
    """The prose's verdict waits for the whole reply: it states a count, and the number of the
    reply's claims is not known yet (a reply still arriving, verify/preview.py)."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that join or point but frame nothing on their own ("It does.", "It works." answer).
FUNCTION_WORDS = _words(
    """a an the this that these those it its it's they them their there there's which what what's
    who whom whose where when why how and or but so as of in on at by for from to into onto
    with within inside about above under over after before between through via per like is are
    was were be been being do does did done has have had can could may might will would shall
    should we you i me my your our us i'll we'll you'll i've we've that's more some most both
    each either other another such same own just well now sure great alright okay ok right
    works work working happens happen handled handles handling"""
)
# Words about the answer itself: at least one must be there for a span to be framing.
FRAMING_WORDS = _words(
    """here here's let let's see look looking shown show shows showing following follows follow
    steps step part parts piece pieces summary summarise summarize summarised summarized short
    brief briefly overall detail details detailed specifically particular particularly example
    examples instance note notice answer answers question questions asked ask code source sources
    snippet snippets line lines relevant indexed retrieved provided given match matches matching
    best way ways process also then thus hence therefore moreover furthermore additionally
    finally first firstly second secondly third next lastly besides meanwhile instead otherwise
    however although though while whereas because since put simply words together altogether sum
    up bit closer quote quoted quotes cited cite citing citations context broadly speaking
    generally essentially basically again further key main important rest remainder case cases
    explained explanation explains explain describe described describes walk walkthrough through
    going breakdown break down broken stages stage points point things thing takeaways takeaway
    flow gist nutshell tl dr recap conclusion overview said based below start begin matter
    matters putting hand version"""
)
# A clause whose subject is the speaker or the answer ("Let's dig in", "Here's ...") may use
# ordinary words: it says what the answer does next, not what the code does.
_SPEAKER = frozenset({"let", "let's", "i'll", "we'll", "here", "here's"})
_WORD = re.compile(r"[A-Za-z]+(?:['\u2019][A-Za-z]+)?")
# Words and the punctuation that ends an embedded question ("Here's what happens: X does Y.").
_TOKEN = re.compile(r"[A-Za-z]+(?:['\u2019][A-Za-z]+)?|[,:;.!?\u2014]")
_CODE_MARKS = re.compile(r"[0-9`_/\\{}\[\]<>=~$@#|*^%&+]|\w\.\w|\w\(")
# Markdown layout around framing: a heading mark, emphasis markers around words.
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_EMPHASIS = re.compile(r"(\*\*|__|\*)(?=\S)(.+?)(?<=\S)\1")
_TICKED = re.compile(r"`([^`\s]+)`")
_WH_WORDS = frozenset({"how", "what", "what's", "when", "where", "why", "which", "whether"})
_OPENER = re.compile(r"^\W*(?:here|here's|let|let's|i'll|we'll)\b", re.IGNORECASE)
# A label announcing the part of the answer that follows: a preposition or an ordinal, then the
# question's or the sources' words, a colon ("For options:", "Inside the types:", "First, the
# declared type:"). Short and verbless by its shape, it asserts nothing.
MAX_LABEL_WORDS = 5


def _folded(word: str) -> str:
    return word.lower().replace("\u2019", "'")


def stem(word: str) -> str:
    """A crude stem for matching a word to the question's and the sources' words: lower case,
    no possessive or plural ending, at most five letters ("tokens" ~ "token", "invalidated" ~
    "invalidate")."""
    word = _folded(word)
    if word.endswith("'s"):
        word = word[:-2]
    word = word.rstrip("'")
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:5]


_IDENTIFIER_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def word_stems(texts: Iterable[str]) -> frozenset[str]:
    """The stems of every word in ``texts``, identifiers also split into their parts
    (``should_strip_auth``, ``getParameterSource``), numbers as they are."""
    tokens: set[str] = set()  # each distinct word once: code repeats its names
    for text in texts:
        tokens.update(_STEMMED.findall(text))
    stems: set[str] = set()
    for token in tokens:
        token = _POSSESSIVE.sub("", token)
        stems.add(stem(token))
        if not (token.isalpha() and token.islower()):  # a plain word is its only part
            stems.update(stem(part) for part in _IDENTIFIER_PART.findall(token))
    return frozenset(stems)


_STEMMED = re.compile(r"[A-Za-z0-9]+(?:['\u2019][A-Za-z]+)?")
_POSSESSIVE = re.compile(r"['\u2019]s?$")


def _layout_free(text: str) -> tuple[str, bool]:
    """The text without Markdown heading and emphasis marks, and whether it was set as a heading
    (a heading or a line wholly in emphasis)."""
    stripped = text.strip()
    heading = bool(_HEADING.match(stripped))
    stripped = _HEADING.sub("", stripped)
    whole = _EMPHASIS.fullmatch(stripped.rstrip(":")) is not None
    return _EMPHASIS.sub(r"\2", stripped).strip(), heading or whole


def _named(asked: frozenset[str]) -> Callable[[re.Match[str]], str]:
    def name(match: re.Match[str]) -> str:
        words = " ".join(_IDENTIFIER_PART.findall(match.group(1)))
        return words if words and word_stems([words]) <= asked else match.group(0)

    return name


def prose_problem(
    text: str,
    asked: frozenset[str] = frozenset(),
    code: Container[str] | None = None,
    names: frozenset[str] = frozenset(),
    claims: int | None = 0,
) -> str | None:
    """Why ``text`` is more than framing (then it is an uncited claim), or None.

    One rule: framing says what the answer does, never what the code does. So a prose span holds
    no code, digits or polarity word, no count (two..twelve) but the number of the answer's
    ``claims`` ("There are three steps:" above three), and at least one framing word; in
    an opener (a heading, a line ending in a colon, "Here's"/"Let me") it may name the question's
    and the repository's own names (``asked``, ``names``: the question's word stems, the sources'
    paths and symbols) and, in an embedded question, the question's words ("how Click handles
    this"); a clause whose subject is the speaker ("Let's dig in") may use any word that is not
    a word of the cited code (``code``: the sources' word stems; None: only the vocabulary).
    ``claims`` None: not known yet; a count then raises Undecided.
    """
    if len(text) > MAX_PROSE_CHARS or len(text.split()) > MAX_PROSE_WORDS:
        return f"prose is at most {MAX_PROSE_WORDS} words of framing"
    plain, heading = _layout_free(text)
    opener = heading or plain.rstrip(" .!").endswith(":") or bool(_OPENER.match(plain))
    if opener:  # `confirm` naming what the question names is that word, not code
        plain = _TICKED.sub(_named(asked | names), plain)
    marks = _CODE_MARKS.search(plain)
    if marks:
        return f"prose names code, a path or a number ({marks.group(0)!r})"
    written = _TOKEN.findall(plain)
    tokens = [_folded(token) for token in written]
    # A count is a claim ("There are seven steps:" above five claims): it holds only when the
    # answer has that many claims.
    counts = [token for token in tokens if COUNT_WORDS.get(token, claims) != claims]
    if counts and claims is None:
        raise Undecided(counts[0])
    if counts:
        return (
            f"prose states a count ({counts[0]!r}) the answer's {claims} claims do not make: "
            "a number is a claim, cited or left out"
        )
    # A heading or opener that is a question ("**How it works**", "What it does:") frames.
    framing = opener and bool(tokens) and tokens[0] in _WH_WORDS
    label = _is_label(plain, tokens)
    asking = speaking = False
    clause_start = True
    unknown = []
    for word, as_written in zip(tokens, written, strict=True):
        if not word[0].isalpha():
            asking = speaking = False  # the clause ends here; what follows would assert
            clause_start = True
            continue
        name = as_written[0].isupper() and not clause_start  # "Click", "SQLite": a name
        if clause_start:
            speaking = word in _SPEAKER
            clause_start = False
        topic = stem(word) in names or (name and stem(word) in asked)
        if word in FRAMING_WORDS or word in COUNT_WORDS:
            framing = True
        elif opener and (topic or ((asking or label) and stem(word) in asked)):
            framing = framing or asking or label  # the topic announced: "how Click handles it"
        elif word in FUNCTION_WORDS:
            pass
        elif speaking and not asking and code is not None and not name and stem(word) not in code:
            pass  # the answer's own doing: "Let's dig in", "Let me unpack this"
        else:
            unknown.append(word)
        asking = asking or word in _WH_WORDS
    if unknown:
        listed = ", ".join(repr(word) for word in dict.fromkeys(unknown[:3]))
        return f"prose says something about the code ({listed})"
    if not framing and any(token[0].isalpha() for token in tokens):
        return "prose frames the answer; on its own this one answers the question"
    return None


def _is_label(plain: str, tokens: list[str]) -> bool:
    """A short label ending in a colon that starts with a preposition or an ordinal, with no
    verb or subject the vocabulary knows ("For a redirect, it strips:" states)."""
    words = [token for token in tokens if token[0].isalpha()]
    starts = bool(words) and (words[0] in _LABEL_STARTS)
    clause = any(word in _NOT_IN_LABEL for word in words)
    return starts and not clause and len(words) <= MAX_LABEL_WORDS and plain.endswith(":")


_LABEL_STARTS = _words("for in inside within on with about regarding first then next finally also")
# Words that make a label a clause: a verb the vocabulary knows, a subject ("For keys, it
# retires:" states).
_NOT_IN_LABEL = _words(
    """is are was were be been being do does did done has have had can could may might will
    would shall should works work happens happen handled handles it its they them this that
    these those which who we you i he she"""
)


_GAP_OPENING = re.compile(
    r"^(?:(?:the|these)\s+)?(?:retrieved\s+|given\s+|provided\s+|shown\s+)?"
    r"(?:sources?|code|lines|snippets?)(?:\s+shown)?\s+(?:do|does)\s*(?:not|n['\u2019]t)\s+"
    r"(?:show|say|include|contain|cover|explain|mention|reveal)\s*:?\s*"
    r"|^(?:none\s+of\s+the\s+sources|no\s+source)\s+(?:shows?|says?|includes?|covers?)\s*:?\s*"
    r"|^(?:it\s+is\s+)?not\s+(?:shown|covered|included)(?:\s+(?:in|by)\s+the\s+"
    r"(?:retrieved\s+|given\s+|provided\s+)?(?:sources?|code|lines|snippets?))?\s*[:\u2014-]?\s*",
    re.IGNORECASE,
)
_GAP_CLOSING = re.compile(
    r"\s+(?:is|are)\s+not\s+(?:shown|covered|included)(?:\s+(?:in|by)\s+the\s+"
    r"(?:retrieved\s+|given\s+|provided\s+)?(?:sources?|code|lines|snippets?))?$",
    re.IGNORECASE,
)
_SENTENCE_BREAK = re.compile(r"[.!?;]\s+\S")
# A continuation that states something beside what is missing: ", which it does", ", but ...".
_ASSERTS = re.compile(
    r",\s*(?:but|which|and|so|yet|though|although|because|since|as|while|whereas)\b"
    r"|\b(?:but|although|though|because|whereas|however)\b"
    r"|\b(?:which|as)\s+(?:it|they|this|that|he|she)\s+(?:do|does|did|is|are|was|were|has|have)\b"
    r"|\u2014|\s\(",
    re.IGNORECASE,
)
_GAP_QUESTIONS = _WH_WORDS | {"who", "if", "whom", "whose"}
# In a gap that is a noun phrase, a finite verb or a quantifier makes it a statement.
_STATES = re.compile(
    r"\b(?:is|are|was|were|isn't|aren't|does|do|did|doesn't|don't|has|have|had|can|cannot|"
    r"can't|will|won't|would|should|must|may|might|always|never|only|every|all|none)\b",
    re.IGNORECASE,
)
_LINE_REFERENCE = re.compile(
    r"\blines?\s+\d+(?:\s*(?:-|\u2013|to|and|,)\s*\d+)*\b|\bL\d+(?:-L?\d+)?\b", re.IGNORECASE
)
_GAP_TOKEN = re.compile(r"[A-Za-z0-9_$]+(?:\.[A-Za-z0-9_$]+)*(?:['\u2019][A-Za-z]+)?")


def _specific(token: str, first: bool) -> bool:
    """A name rather than an ordinary word: an identifier (digits, ``_``, dots, inner capitals),
    an acronym, or a capitalised word ("SQLite", "Redis", "Click's"). An ordinary word may describe
    what is missing ("how clients learn of the new key"); a name says that the thing exists."""
    if re.search(r"[0-9_$.]", token) or any(char.isupper() for char in token[1:]):
        return True
    if not token[:1].isupper():
        return False
    return not (first and _folded(token) in FUNCTION_WORDS | FRAMING_WORDS | {"whether", "if"})


def gap_problem(text: str, known: frozenset[str] | None = None) -> str | None:
    """Why ``text`` is not a short "the sources do not show X" statement, or None. ``known`` holds
    the stems of the question's and the sources' words (:func:`word_stems`); None skips the
    check that the gap's names come from them."""
    if len(text) > 2 * MAX_GAP_CHARS:  # before stripping openings: bounded work on any input
        return f"a gap is one sentence of at most {MAX_GAP_CHARS} characters"
    what = gap_subject(text)
    if not what:
        return "a gap says what the sources do not show; this one is empty"
    if len(what) > MAX_GAP_CHARS:
        return f"a gap is one sentence of at most {MAX_GAP_CHARS} characters"
    if _SENTENCE_BREAK.search(what):
        return "a gap is one sentence; the rest states something about the code"
    asserts = _ASSERTS.search(what)
    if asserts:
        return f"a gap names what is missing and asserts nothing ({asserts.group(0).strip()!r})"
    if re.match(r"that\b", what, re.IGNORECASE):
        return "a gap names what is missing (how, whether, which ...); 'that ...' states it"
    first = _folded(what.split(" ", 1)[0])
    if first not in _GAP_QUESTIONS:
        verb = _STATES.search(what)
        if verb:  # "the refresh job is hourly": a clause, not the name of what is missing
            return (
                "a gap is a question (how, whether, ...) or the name of what is missing; "
                f"{verb.group(0)!r} states something"
            )
    rest = _LINE_REFERENCE.sub(" ", what)
    if known is None:
        if re.search(r"[0-9]", rest):
            return "a gap names no numbers but line numbers: they would state something"
        return None
    unknown = [
        token
        for index, token in enumerate(_GAP_TOKEN.findall(rest))
        if _specific(token, index == 0) and not word_stems([token.replace(".", " ")]) <= known
    ]
    if unknown:
        listed = ", ".join(repr(word) for word in dict.fromkeys(unknown[:3]))
        return f"a gap names only what the question or the sources name (not {listed})"
    return None


def gap_subject(text: str) -> str:
    """What the gap says is missing, without an opening like "The sources do not show" (however
    often the model repeated it) or a closing like "is not shown in the sources"."""
    what = text.strip()
    while True:
        shorter = _GAP_OPENING.sub("", what, count=1).strip()
        shorter = _GAP_CLOSING.sub("", shorter.rstrip(".!?;: ")).strip()
        if shorter == what:
            break
        what = shorter
    what = what.rstrip(".!?;:").strip()
    first = what.split(" ", 1)[0]
    if _folded(first) in FUNCTION_WORDS | {"whether", "if"} and first[:1].isupper():
        what = first.lower() + what[len(first) :]  # it continues "Not shown in ...: "
    return what
