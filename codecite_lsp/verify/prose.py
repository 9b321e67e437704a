"""What a reply may say without a citation (pure): framing prose and "the sources do not show X".

Prose carries no facts. A prose span is connecting words and framing ("Here is how it works:",
"In short,", "Also,"), so its rule is a closed vocabulary: function words and words about the
answer itself (lines, sources, example, below). Anything else (a name, a number, a path, code, a
noun about the code such as "SQLite" or "database") states something about the repository and is
an uncited claim. Polarity words ("not", "never", "always", "only", "yes", "no") are left out of
the vocabulary: "It does not." answers a question with nothing to back it.

A gap span says what the sources do not show. It may name what was asked about (an identifier is
how one says it), but it is one short sentence without numbers, and the user sees it framed as
"not shown", never as a statement about the code.
"""

from __future__ import annotations

import re

MAX_PROSE_CHARS = 160
MAX_PROSE_WORDS = 24
MAX_GAP_CHARS = 200

FRAMING_WORDS = frozenset(
    """a an the this that these those it its it's they them their there there's here here's
    which what who whom whose where when why how and or but so also then thus hence therefore
    moreover furthermore additionally finally first firstly second secondly third next lastly
    besides meanwhile instead otherwise however although though while whereas because since as
    of in on at by for from to into onto with within about above below under over after before
    between through via per like is are was were be been being do does did done has have had can
    could may might will would shall should let's let us we you i see look looking shown show
    shows showing following follows follow steps step part parts piece pieces summary summarise
    summarize summarised summarized short brief briefly overall detail details detailed
    specifically particular particularly example examples instance note notice answer answers
    question questions asked ask code source sources snippet snippets line lines relevant
    indexed match matches matching best works work working happens handled handles handling way
    ways process more some most several both each either other another such same own put simply
    words together altogether sum up bit closer quote quoted quotes cited cite citing citations
    context broadly speaking generally essentially basically well okay ok now
    again further just key main important rest remainder case cases relevant
    piece together explained explanation explains explain describe described describes
    """.split()  # noqa: SIM905 - a word list reads better as prose
)

_WORD = re.compile(r"[A-Za-z]+(?:['\u2019][A-Za-z]+)?")
_CODE_MARKS = re.compile(r"[0-9`_/\\{}\[\]<>=~$@#|*^%&+]|\w\.\w|\w\(")
_GAP_OPENING = re.compile(
    r"^\s*(?:(?:the|these)\s+)?(?:retrieved\s+|given\s+|provided\s+)?"
    r"(?:sources?|code|lines|snippets?)\s+(?:do|does)\s*(?:not|n['\u2019]t)\s+"
    r"(?:show|say|include|contain|cover|explain|mention)\s*:?\s*"
    r"|^\s*not\s+shown(?:\s+in\s+the\s+(?:retrieved\s+)?(?:sources?|code))?\s*:\s*",
    re.IGNORECASE,
)
_SENTENCE_BREAK = re.compile(r"[.!?;]\s+\S")


def prose_problem(text: str) -> str | None:
    """Why ``text`` is more than framing (then it is an uncited claim), or None."""
    if len(text) > MAX_PROSE_CHARS or len(text.split()) > MAX_PROSE_WORDS:
        return f"prose is at most {MAX_PROSE_WORDS} words of framing"
    marks = _CODE_MARKS.search(text)
    if marks:
        return f"prose names code, a path or a number ({marks.group(0)!r})"
    unknown = [
        w for w in _WORD.findall(text) if w.lower().replace("\u2019", "'") not in FRAMING_WORDS
    ]
    if unknown:
        listed = ", ".join(repr(word) for word in dict.fromkeys(unknown[:3]))
        return f"prose says something about the code ({listed})"
    return None


def gap_problem(text: str) -> str | None:
    """Why ``text`` is not a short "the sources do not show X" statement, or None."""
    what = gap_subject(text)
    if not what:
        return "a gap says what the sources do not show; this one is empty"
    if len(what) > MAX_GAP_CHARS:
        return f"a gap is one sentence of at most {MAX_GAP_CHARS} characters"
    if _SENTENCE_BREAK.search(what):
        return "a gap is one sentence; the rest states something about the code"
    if re.search(r"[0-9]", what):
        return "a gap names no numbers: they would state something about the code"
    return None


def gap_subject(text: str) -> str:
    """What the gap says is missing, without an opening like "The sources do not show"."""
    return _GAP_OPENING.sub("", text.strip(), count=1).strip().rstrip(".!?;:").strip()
