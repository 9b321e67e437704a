"""The offline answerer quotes the lines that answer the question; its replies pass the gate."""

from __future__ import annotations

import json
from typing import Any

import pytest
from lsp_helpers import FIXTURE as REPO

from codecite_lsp.core.records import Source, outside_source
from codecite_lsp.offline.extractive import answer
from codecite_lsp.offline.hover import hover_answer
from codecite_lsp.verify.gate import GatePassed, GateRefusedByModel, verify

SECRETLESS = (
    "keyvault/keys.py",
    "keyvault/tokens.py",
    "keyvault/ratelimit.py",
    "keyvault/__init__.py",
    "web/src/client.ts",
    "README.md",
    "docs/operations.md",
)


def repo_sources(window: int) -> list[Source]:
    """The fixture's files cut into fixed windows of lines, labelled like retrieval would."""
    sources: list[Source] = []
    for rel in SECRETLESS:
        lines = (REPO / rel).read_text(encoding="utf-8").split("\n")[:-1]
        for start in range(0, len(lines), window):
            part = lines[start : start + window]
            sources.append(
                outside_source(
                    f"S{len(sources) + 1}", rel, start + 1, start + len(part), "\n".join(part)
                )
            )
    return sources


def claims_of(raw: str) -> list[dict[str, Any]]:
    return [span for span in json.loads(raw)["spans"] if span["kind"] == "claim"]


def lines_cited(sources: list[Source], claim: dict[str, Any]) -> tuple[str, int, int]:
    citation = claim["citations"][0]
    path = next(s.result.chunk.path for s in sources if s.label == citation["source"])
    return path, citation["start_line"], citation["end_line"]


ROTATE_KEY_LINES = range(47, 58)  # def rotate_key ... return fresh in keyvault/keys.py


@pytest.mark.parametrize("window", [12, 20, 80])
def test_key_rotation_question_quotes_rotate_key(window: int) -> None:
    sources = repo_sources(window)
    raw = answer("Which function rotates API keys?", sources)
    claims = claims_of(raw)
    assert 2 <= len(claims) <= 4
    path, start, end = lines_cited(sources, claims[0])
    assert path == "keyvault/keys.py"
    assert start in ROTATE_KEY_LINES and end in ROTATE_KEY_LINES
    assert "def rotate_key(" in claims[0]["citations"][0]["quote"]
    assert claims[0]["text"].startswith("`rotate_key` in keyvault/keys.py")
    assert "issue a new key and retire the old one" in claims[0]["text"]
    for claim in claims:  # short windows of lines, never whole chunks
        _, first, last = lines_cited(sources, claim)
        assert last - first < 4
    assert isinstance(verify(raw, sources), GatePassed)


@pytest.mark.parametrize("window", [12, 20, 80])
def test_how_keys_are_rotated_is_answered_by_the_body_of_rotate_key(window: int) -> None:
    sources = repo_sources(window)
    raw = answer("how are API keys rotated?", sources)
    claims = claims_of(raw)
    path, start, end = lines_cited(sources, claims[0])
    assert (path, start, end) == ("keyvault/keys.py", 55, 55)  # fresh = new_key(now)
    assert claims[0]["text"] == "In `rotate_key` (keyvault/keys.py), line 55:"
    assert isinstance(verify(raw, sources), GatePassed)


def test_answer_starts_with_one_short_prose_span() -> None:
    spans = json.loads(answer("how are API keys rotated?", repo_sources(20)))["spans"]
    assert spans[0]["kind"] == "prose" and len(spans[0]["text"]) < 100
    assert all(span["kind"] == "claim" for span in spans[1:])


def test_a_different_question_finds_different_lines() -> None:
    sources = repo_sources(20)
    raw = answer("how long are session tokens valid?", sources)
    cited = [lines_cited(sources, c)[0] for c in claims_of(raw)]
    assert "docs/operations.md" in cited or "keyvault/tokens.py" in cited
    assert "keyvault/keys.py" not in cited
    assert isinstance(verify(raw, sources), GatePassed)


@pytest.mark.parametrize(
    "question", ["what is the capital of France?", "how does it work?", "", "?!"]
)
def test_unrelated_or_empty_questions_refuse(question: str) -> None:
    raw = answer(question, repo_sources(20))
    assert json.loads(raw) == {"spans": [], "refuse": {"reason": "no_span_in_retrieval"}}
    assert isinstance(verify(raw, repo_sources(20)), GateRefusedByModel)


def test_no_sources_refuse() -> None:
    assert json.loads(answer("how are API keys rotated?", []))["refuse"] is not None


def test_hover_summarises_the_definition_and_cites_uses() -> None:
    sources = repo_sources(20)
    definition = next(
        s
        for s in sources
        if s.result.chunk.path == "keyvault/keys.py" and s.result.chunk.start_line == 41
    )
    raw = hover_answer("rotate_key", definition, [s for s in sources if s is not definition])
    claims = claims_of(raw)
    first = claims[0]
    assert first["text"] == (
        "`rotate_key` is defined in keyvault/keys.py: "
        "Rotate a client's API key: issue a new key and retire the old one."
    )
    assert lines_cited(sources, first) == ("keyvault/keys.py", 47, 48)
    uses = claims[1:]
    assert uses and all("rotate_key" in c["citations"][0]["quote"] for c in uses)
    assert lines_cited(sources, uses[0])[0] == "keyvault/__init__.py"
    assert isinstance(verify(raw, sources), GatePassed)


def test_hover_takes_a_doc_comment_above_a_typescript_method() -> None:
    sources = repo_sources(80)
    client = next(s for s in sources if s.result.chunk.path == "web/src/client.ts")
    raw = hover_answer("KeyvaultClient.rotateKey", client, [])
    first = claims_of(raw)[0]
    assert first["text"].endswith(": Ask the server to rotate the caller's API key.")
    assert lines_cited(sources, first) == ("web/src/client.ts", 11, 12)
    assert isinstance(verify(raw, sources), GatePassed)


def test_hover_with_nothing_known_refuses() -> None:
    assert json.loads(hover_answer("nowhere", None, []))["refuse"] is not None
    assert json.loads(hover_answer("nowhere", None, repo_sources(20)))["refuse"] is not None


def test_claim_text_names_the_enclosing_definition_and_the_fitting_sentence() -> None:
    sources = repo_sources(20)
    raw = answer("where is the token signature checked?", sources)
    texts = [c["text"] for c in claims_of(raw)]
    assert texts and all(
        t.startswith("In `verify_token` (keyvault/tokens.py), line") for t in texts
    )
    grace = claims_of(answer("what is the grace period for old keys?", sources))
    # Of "Keys rotate every 30 days. The old key keeps working for a 24 hour grace period.",
    # the claim text keeps the sentence that answers the question.
    assert "docs/operations.md, line 5: The old key keeps working for a 24 hour grace period." in [
        c["text"] for c in grace
    ]


def chunked(rel: str, cuts: list[tuple[int, int]], first_label: int) -> list[Source]:
    lines = (REPO / rel).read_text(encoding="utf-8").split("\n")
    return [
        outside_source(
            f"S{first_label + i}", rel, a, b, "\n".join(lines[a - 1 : b]) + "\n", symbol=None
        )
        for i, (a, b) in enumerate(cuts)
    ]


# How a syntax chunker with a small budget cuts these files: rotate_key's signature (line 47) and
# its body with the docstring (48-57) land in separate chunks.
SPLIT = [
    *chunked("web/src/client.ts", [(1, 7), (8, 10), (11, 12), (13, 21), (22, 22), (23, 26)], 1),
    *chunked("keyvault/keys.py", [(1, 12), (13, 26), (27, 38), (39, 40), (41, 46)], 7),
    *chunked("keyvault/keys.py", [(48, 57), (47, 47)], 12),  # retrieval order is not file order
]


def test_a_signature_and_docstring_split_across_chunks_are_quoted_together() -> None:
    raw = answer("Which function rotates API keys?", SPLIT)
    first = claims_of(raw)[0]
    assert first["text"].startswith("`rotate_key` in keyvault/keys.py: Rotate a client's API key")
    assert [(c["source"], c["start_line"], c["end_line"]) for c in first["citations"]] == [
        ("S13", 47, 47),
        ("S12", 48, 48),
    ]
    assert isinstance(verify(raw, SPLIT), GatePassed)


def test_hover_joins_the_definition_chunk_with_its_docstring_chunk() -> None:
    definition = next(s for s in SPLIT if s.result.chunk.start_line == 47)
    uses = [s for s in SPLIT if s is not definition]
    raw = hover_answer("rotate_key", definition, uses)
    first = claims_of(raw)[0]
    assert first["text"].endswith(
        ": Rotate a client's API key: issue a new key and retire the old one."
    )
    assert len(first["citations"]) == 2
    assert isinstance(verify(raw, SPLIT), GatePassed)


def source(label: str, path: str, text: str, start: int = 1, symbol: str | None = None) -> Source:
    count = text.count("\n")
    return outside_source(label, path, start, start + count - 1, text, symbol=symbol)


def test_question_terms_that_never_meet_in_one_place_are_no_answer() -> None:
    # "What port does the server listen on?" of a stdio server: each term occurs somewhere, in
    # unrelated code, never together; one shared word is not an answer.
    sources = [
        source(
            "S1",
            "test/realServer.test.ts",
            "const connection = createConnection();\nconnection.listen();\n",
        ),
        source("S2", "mailer.rb", "def deliver(host, port)\n  smtp.open(host, port)\nend\n"),
        source(
            "S3", "server.py", "def start_server():\n    server = Server()\n    return server\n"
        ),
    ]
    question = "What port does the server listen on?"
    assert claims_of(answer(question, sources)) == []
    # Where they do meet, that is the answer.
    told = source("S4", "README.md", "The server listens on port 8080 by default.\n")
    claims = claims_of(answer(question, [*sources, told]))
    assert claims and claims[0]["citations"][0]["source"] == "S4"


WAIT_FOR = '''async def wait_for(fut, timeout):
    """Wait for the single Future or coroutine to complete, with timeout.

    Returns result of the Future or coroutine.  When a timeout occurs,
    it cancels the task and raises TimeoutError.  To avoid the task
    cancellation, wrap it in shield().
    """
    loop = events.get_running_loop()
'''
SSL_DOC = '''def create_server(self, ssl_handshake_timeout=None):
    """ssl_handshake_timeout is the time in seconds that an SSL server
    will wait for the SSL handshake to complete (defaults to 60s).
    """
'''


def test_a_timeout_question_quotes_the_whole_sentence_inside_the_function_it_names() -> None:
    # "times" stems to "tim" and the code says "timeout": the compound still answers.
    sources = [
        source("S1", "events.py", SSL_DOC, 350, "create_server"),
        source("S2", "tasks.py", WAIT_FOR, 436, "wait_for"),
    ]
    claims = claims_of(answer("What happens when wait_for times out?", sources))
    assert all(c["citations"][0]["source"] == "S2" for c in claims[:2])
    timeout_claim = next(c for c in claims if "raises TimeoutError" in c["citations"][0]["quote"])
    # The quote does not stop at "When a timeout occurs,": it runs to the sentence's end.
    assert timeout_claim["text"] == (
        "In `wait_for` (tasks.py), lines 439-441: "
        "When a timeout occurs, it cancels the task and raises TimeoutError."
    )
    assert isinstance(verify(json.dumps({"spans": claims, "refuse": None}), sources), GatePassed)


def test_a_claim_says_defined_only_when_it_quotes_the_definition() -> None:
    lock = (
        "def release(self):\n    self._check()\n    raise RuntimeError('Lock is not acquired.')\n"
    )
    sources = [source("S1", "locks.py", lock, 128, "Lock.release")]
    claims = claims_of(answer("When is RuntimeError raised for a lock not acquired?", sources))
    assert [c["text"] for c in claims] == ["In `Lock.release` (locks.py), line 130:"]
    assert claims[0]["citations"][0]["quote"] == "    raise RuntimeError('Lock is not acquired.')"


def test_a_definition_saying_no_question_term_is_not_quoted_as_filler() -> None:
    reader = (
        "    def __repr__(self):\n"
        "        info = ['StreamReader']\n"
        "        if self._buffer:\n"
        "            info.append(f'{len(self._buffer)} bytes')\n"
    )
    doc = "    Additional optional keyword argument is limit (to set the buffer\n    limit passed to the StreamReader).\n"  # noqa: E501
    sources = [
        source("S1", "streams.py", doc, 70, "start_server"),
        source("S2", "streams.py", reader, 439, "StreamReader.__repr__"),
    ]
    claims = claims_of(answer("How does the StreamReader buffer limit work?", sources))
    assert claims[0]["citations"][0]["quote"].startswith("    Additional optional keyword")
    quotes = [c["citations"][0]["quote"] for c in claims]
    assert not any("def __repr__" in q for q in quotes)
    assert not any(c["text"].startswith("`__repr__` is defined") for c in claims)


def test_a_line_repeating_the_question_is_not_quoted_as_its_answer() -> None:
    question = "How are API keys rotated?"
    echo = outside_source(
        "S1", "README.md", 3, 3, 'codecite ask "How are API keys rotated?" --repo .'
    )
    sources = [echo, *repo_sources(20)]
    sources = [Source(s.result, f"S{n}", scanned=False) for n, s in enumerate(sources, start=1)]
    cited = [
        c["source"] for claim in claims_of(answer(question, sources)) for c in claim["citations"]
    ]
    assert cited, "the real answer is still given"
    assert "S1" not in cited


def test_hover_cites_a_use_rather_than_an_import_of_the_symbol() -> None:
    definition = outside_source("S1", "lib.py", 1, 2, "def rotate(key):\n    return key[::-1]\n")
    user = outside_source(
        "S2",
        "app.py",
        1,
        4,
        "from lib import rotate\n\n\ndef main(key):\n",
    )
    caller = outside_source(
        "S3", "jobs.py", 1, 3, "from lib import rotate\n\nfresh = rotate(old_key)\n"
    )
    claims = claims_of(hover_answer("rotate", definition, [user, caller]))
    quotes = [c["quote"] for claim in claims for c in claim["citations"]]
    assert "fresh = rotate(old_key)" in quotes
    assert "from lib import rotate" in quotes  # a file that only imports it still shows that
    raw = hover_answer("rotate", definition, [user, caller])
    assert isinstance(verify(raw, [definition, user, caller]), GatePassed)


def test_code_is_quoted_before_a_test_restating_it_unless_tests_are_asked_about() -> None:
    code = (
        "class KeyStore:\n    def rotate(self):\n"
        '        """Rotate the signing key: a fresh key replaces the current one."""\n'
        "        self.current = fresh_key()"
    )
    test = (
        "def test_key_store_rotates_the_signing_key():\n    store = KeyStore()\n"
        "    store.rotate()\n    assert store.current != old_signing_key"
    )
    # The test says more of the question's words, and retrieval put it first.
    sources = [
        outside_source("S1", "tests/test_keys.py", 1, 4, test),
        outside_source("S2", "keyvault/keys.py", 1, 4, code),
    ]

    def first_path(question: str) -> str:
        claims = claims_of(answer(question, sources))
        return lines_cited(sources, claims[0])[0]

    assert first_path("how does the key store rotate the signing key?") == "keyvault/keys.py"
    assert first_path("how is the signing key rotation tested?") == "tests/test_keys.py"


def test_where_a_class_is_defined_is_answered_by_its_header() -> None:
    # A decorated class whose name the question says in words: its header leads, although a
    # field and a docstring say more of the question's other words ("refill").
    sources = repo_sources(80)
    claims = claims_of(answer("where is that class defined? token bucket refill", sources))
    assert lines_cited(sources, claims[0]) == ("keyvault/ratelimit.py", 7, 7)
