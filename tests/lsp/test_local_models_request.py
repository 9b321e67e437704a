"""`codecite/localModels` over a real LSP session: a local Ollama-like server started by the test
(a real HTTP server on 127.0.0.1) is found and its models offered, ready for the `model`
setting; the editor can show them as a one-click configuration."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from lsp_helpers import init_params, request, server_config


class _Tags(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"models": [{"name": "llama3.2:latest"}]}).encode()
        self.send_response(200 if self.path == "/api/tags" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


async def test_the_server_offers_a_running_local_ollamas_models(repo: Path) -> None:
    ollama = ThreadingHTTPServer(("127.0.0.1", 0), _Tags)
    threading.Thread(target=ollama.serve_forever, daemon=True).start()
    host = f"127.0.0.1:{ollama.server_address[1]}"
    client = await server_config(OLLAMA_HOST=host).start()
    try:
        await client.initialize_session(init_params("visual-studio-code", repo))
        found = await request(client, "codecite/localModels", {})
        assert found == {"host": f"http://{host}", "models": ["ollama/llama3.2:latest"]}
    finally:
        await client.shutdown_session()
        await client.stop()
        ollama.shutdown()
        ollama.server_close()
