"""The only module that touches pygls internals: message reading, the LSP life cycle and the
replies pygls would not send.

- Reading: ``serve_stdio`` replaces pygls' stdin loop with ``frames.FrameParser``, so a bad
  frame costs only itself (see frames.py) and an absurd Content-Length is refused at once.
- Life cycle, as the LSP specification prescribes: a request before ``initialize`` gets
  ServerNotInitialized (-32002), a request after ``shutdown`` InvalidRequest (-32600), a second
  ``initialize`` InvalidRequest; notifications then are dropped (except ``exit``). pygls served
  requests before initialize and left those after shutdown unanswered.
- Buffers: didOpen/didChange/didClose keep the text in buffers.py (edits in time bounded by the
  edit; pygls rewrote the whole buffer per edit).
- Text: a lone surrogate escaped in a message becomes U+FFFD (core/surrogates.py) before pygls
  or a handler sees it; left in, every answer and log line holding it failed.
- Errors: a body that is not JSON gets a parse error (-32700, id null); JSON that is not a
  JSON-RPC 2.0 message gets InvalidRequest; params that do not fit the method's types get
  InvalidParams (-32602) naming the field. pygls answered none of these, or with -32603.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCResponseMessage
from pygls.protocol.language_server import lsp_method

from ..core.surrogates import without_lone_surrogates
from .buffers import Buffers
from .frames import MAX_JSON_DEPTH, FrameParser, Problem, too_deep

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from ..core.positions import Encoding

log = logging.getLogger("codecite_lsp")

_READ_CHUNK = 64 * 1024
_QUEUED_CHUNKS = 64  # read ahead at most 4 MiB: a fast writer waits on the pipe, not our memory
_ANSWERED = object()  # structure_message's result for a message it has already answered


class CodeciteProtocol(LanguageServerProtocol):
    initialize_seen = False
    exiting = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.buffers = Buffers()  # before pygls registers the handlers below
        super().__init__(*args, **kwargs)

    # -- open buffers -------------------------------------------------------------------------
    # Kept in buffers.py, not in pygls' workspace: pygls rewrote a whole buffer per edit.

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Any:
        document = params.text_document
        self.buffers.open(document.uri, document.text, document.version)
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        document, encoding = params.text_document, self.encoding()
        self.buffers.change(document.uri, document.version, params.content_changes, encoding)
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Any:
        self.buffers.close(params.text_document.uri)
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)

    def _user_handler(self, method: str, params: Any) -> Any:
        """pygls' way for a built-in handler to run the server's own one after it."""
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    def encoding(self) -> Encoding:
        """How the client counts characters in positions (negotiated at initialize)."""
        negotiated = self.workspace.position_encoding
        value = getattr(negotiated, "value", negotiated)
        return "utf-8" if value == "utf-8" else "utf-32" if value == "utf-32" else "utf-16"

    # -- reading ------------------------------------------------------------------------------

    def receive(self, body: bytes) -> None:
        """One frame's body: parse, check it is a JSON-RPC message, hand it on."""
        if too_deep(body):
            log.error("LSP: a message nested deeper than %d levels", MAX_JSON_DEPTH)
            self._send_error(
                None, JsonRpcParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
            )
            return
        try:
            message = json.loads(without_lone_surrogates(body), object_hook=self.structure_message)
        except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, or too deep anyway
            log.error("LSP: a message that is not JSON (%s)", exc)
            self._send_error(None, JsonRpcParseError(f"not valid JSON: {exc}"))
            return
        except JsonRpcException as exc:  # a notification that fits no type: nobody waits
            log.error("LSP: dropped a malformed notification (%s): %.200r", exc, body)
            return
        if message is _ANSWERED:
            return
        if getattr(message, "jsonrpc", None) != self.VERSION:
            msg_id = (
                message.get("id") if isinstance(message, dict) else getattr(message, "id", None)
            )
            log.error("LSP: not a JSON-RPC 2.0 message: %.200r", body)
            self._send_error(
                msg_id if isinstance(msg_id, (str, int)) else None,
                JsonRpcInvalidRequest('not a JSON-RPC 2.0 message (need "jsonrpc": "2.0")'),
            )
            return
        try:
            self.handle_message(message)
        except Exception:  # a handler's own failure is answered by pygls; this is a bug
            log.exception("LSP: message handling failed")

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" in data and "method" in data and not isinstance(data["method"], str):
            # pygls failed on it with InternalError (-32603); a notification: nobody waits.
            if _valid_id(data.get("id")):
                self._send_error(data["id"], JsonRpcInvalidRequest("method must be a string"))
                return _ANSWERED
            raise JsonRpcInvalidRequest("method must be a string")
        if "jsonrpc" in data and "method" in data and "params" not in data:
            # JSON-RPC lets a request omit params; pygls's generic message type for custom
            # methods requires the field, fails, and the request was never answered.
            data = {**data, "params": None}
        try:
            return super().structure_message(data)
        except (JsonRpcInvalidParams, JsonRpcInternalError) as exc:
            if "id" in data and "method" not in data and _valid_id(data["id"]):
                # The client's reply to one of our requests, in a shape its type does not
                # allow (showDocument answered with null): the request still ends, with the
                # result as sent (None for a malformed error), or the feature awaiting it
                # would never answer its own client.
                log.warning("LSP: a reply of an unexpected shape: %.200r", data)
                return JsonRPCResponseMessage(
                    id=data["id"], jsonrpc=self.VERSION, result=data.get("result")
                )
            if "id" not in data or "method" not in data:
                raise  # a notification: nobody waits for an answer
            why = "; ".join(_readable(exc.__cause__)) or str(exc)
            self._send_error(
                data["id"], JsonRpcInvalidParams(f"invalid params for {data['method']}: {why}")
            )
            return _ANSWERED

    # -- life cycle ---------------------------------------------------------------------------

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method == types.EXIT:
            self.exiting = True
        elif method is not None:
            msg_id = getattr(message, "id", None)
            if hasattr(message, "id") and not _valid_id(msg_id):
                self._send_error(None, JsonRpcInvalidRequest("an id must be a string or a number"))
                return
            refusal = self._refusal(method)
            if refusal is not None:
                if hasattr(message, "id"):
                    self._send_error(message.id, refusal)
                else:
                    log.info("LSP: dropped notification %s: %s", method, refusal)
                return
        super().handle_message(message)

    def _refusal(self, method: str) -> JsonRpcException | None:
        if self._shutdown:
            return JsonRpcInvalidRequest(f"{method}: the server is shutting down")
        if method == types.INITIALIZE:
            if self.initialize_seen:
                return JsonRpcInvalidRequest("initialize was already received")
            self.initialize_seen = True
            return None
        if not self.initialize_seen:
            return JsonRpcServerNotInitialized(f"{method}: the server is not initialized yet")
        return None

    # -- writing ------------------------------------------------------------------------------

    def _send_error(self, msg_id: str | int | None, error: JsonRpcException) -> None:
        # A plain dict: the typed message drops a null id, which a parse error needs.
        if not _valid_id(msg_id):
            msg_id = None  # null when the id cannot be read
        self._send_data(
            {
                "jsonrpc": self.VERSION,
                "id": msg_id,
                "error": {"code": error.code, "message": error.message},
            }
        )

    def _send_data(self, data: Any) -> None:
        # After exit stdout is closed: a progress report still queued by the indexing thread
        # failed, and reporting that failure failed again (megabytes of tracebacks on stderr).
        if not self.exiting:
            super()._send_data(data)


def _valid_id(msg_id: Any) -> bool:
    """JSON-RPC ids are strings or numbers (pygls keys its bookkeeping by them)."""
    return isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool)


def _readable(error: BaseException | None) -> list[str]:
    """cattrs' errors as ``params.position.line: expected int``, in the wire's field names."""
    from cattrs import transform_error

    if not isinstance(error, Exception):
        return []
    lines = transform_error(error, path="", format_exception=_expected)
    return [_wire_path(line) for line in lines]


def _expected(exc: BaseException, kind: Any) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    if kind is None:
        return str(exc)
    name = getattr(kind, "__name__", None) if isinstance(kind, type) else None
    return f"expected {name or str(kind).replace('typing.', '').replace('NoneType', 'null')}"


def _wire_path(line: str) -> str:
    """``expected int @ .params.text_document`` -> ``params.textDocument: expected int``."""
    message, _, where = line.rpartition(" @ ")
    if not message:
        return line
    parts = [_camel(part) for part in where.strip(".").split(".")]
    return f"{'.'.join(parts)}: {message}"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def serve_stdio(server: LanguageServer, stdin: BinaryIO | None = None) -> None:
    """pygls' ``start_io`` with this module's reader; returns when the client exits or leaves."""
    protocol = server.protocol
    assert isinstance(protocol, CodeciteProtocol)
    stop = threading.Event()
    server._stop_event = stop
    protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    try:
        asyncio.run(_read_loop(stop, stdin or sys.stdin.buffer, protocol))
    except BrokenPipeError:
        log.error("the connection to the client is lost")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


async def _read_loop(stop: threading.Event, stdin: BinaryIO, protocol: CodeciteProtocol) -> None:
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue(maxsize=_QUEUED_CHUNKS)

    def pump() -> None:
        """Blocking reads in a daemon thread: one blocked in read() never holds up the exit."""
        data = b"x"
        while data:
            try:
                data = stdin.read1(_READ_CHUNK)  # type: ignore[attr-defined]
            except (OSError, ValueError):
                data = b""
            put = chunks.put(data)
            try:
                asyncio.run_coroutine_threadsafe(put, loop).result()
            except RuntimeError:  # the loop is gone: the server is exiting
                put.close()  # never run: no "coroutine was never awaited" warning at exit
                return

    threading.Thread(target=pump, name="codecite-stdin", daemon=True).start()
    parser = FrameParser()
    while not stop.is_set():
        data = await chunks.get()
        if not data:
            log.info("LSP: the client closed stdin")
            return
        for event in parser.feed(data):
            if isinstance(event, Problem):
                log.error("LSP framing error: %s", event.message)
                continue
            try:
                protocol.receive(event.body)
            except Exception:  # a bug must cost one message, never the connection
                log.exception("LSP: a message could not be handled")
