"""Local Ollama detection against real servers on 127.0.0.1: one answering like Ollama's
``/api/tags``, one that accepts and never answers, and a port with nothing listening."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from lsp_helpers import fake_ollama

from codecite_lsp.answer import local_models as lm
from codecite_lsp.answer.pipeline import offline_note

TAGS = {
    "models": [
        {"name": "qwen2.5-coder:1.5b", "model": "qwen2.5-coder:1.5b", "size": 986061892},
        {"name": "llama3.2:latest", "model": "llama3.2:latest", "size": 2019393189},
    ]
}


ASKED: list[str] = []  # the paths the fake server was asked


@pytest.fixture
def ollama() -> Iterator[str]:
    with fake_ollama(TAGS, ASKED) as host:
        yield host


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    lm._found.clear()
    yield
    lm._found.clear()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_running_local_server_offers_its_models_as_litellm_names(
    ollama: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", ollama)
    found = lm.local_models()
    assert found == lm.LocalModels(
        f"http://{ollama}", ("ollama/qwen2.5-coder:1.5b", "ollama/llama3.2:latest")
    )
    assert "/api/tags" in ASKED
    # The offline answer's note names them and the one command that uses one.
    note = offline_note()
    assert note.startswith("No model is configured")
    assert "ollama/qwen2.5-coder:1.5b, ollama/llama3.2:latest" in note
    assert "`--model ollama/qwen2.5-coder:1.5b`" in note


def test_the_answer_is_asked_once_per_process(ollama: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", ollama)
    ASKED.clear()
    first = lm.local_models()
    second = lm.local_models()
    assert first == second and first.models
    assert ASKED == ["/api/tags"]


def test_nothing_listening_offers_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{_free_port()}")
    assert lm.local_models().models == ()
    assert "Ollama server is running" not in offline_note()


def test_a_server_that_never_answers_is_given_up_on_at_the_timeout() -> None:
    with socket.socket() as silent:  # accepts connections (the backlog), never replies
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        port = silent.getsockname()[1]
        assert lm.ask_tags(f"http://127.0.0.1:{port}", timeout=0.2) == ()


@pytest.mark.parametrize(
    "host,base",
    [
        (None, "http://127.0.0.1:11434"),
        ("", "http://127.0.0.1:11434"),
        ("0.0.0.0", "http://127.0.0.1:11434"),  # listening everywhere: asked on loopback
        ("localhost:8080", "http://localhost:8080"),
        ("http://127.0.0.2:9", "http://127.0.0.2:9"),
        ("[::1]:11434", "http://[::1]:11434"),
        ("10.0.0.7:11434", None),  # another machine: never asked
        ("ollama.example.com", None),
        ("http://127.0.0.1:notaport", None),
        ("ftp://127.0.0.1:21", None),
    ],
)
def test_only_a_loopback_address_is_ever_asked(host: str | None, base: str | None) -> None:
    environ = {} if host is None else {"OLLAMA_HOST": host}
    assert lm.ollama_base(environ) == base


def test_another_machine_named_by_ollama_host_offers_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "192.0.2.1:11434")  # TEST-NET: would hang if asked
    assert lm.local_models() == lm.LocalModels(None, ())
    assert lm._found == {}  # nothing was asked


def test_a_server_that_is_not_ollama_offers_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotOllama)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert lm.ask_tags(f"http://127.0.0.1:{server.server_address[1]}") == ()
    finally:
        server.shutdown()
        server.server_close()


class _NotOllama(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html>a web page</html>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass
