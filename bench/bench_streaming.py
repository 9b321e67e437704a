"""Verified streaming: how soon each claim is on the client after the model wrote it.

The real server over stdio, started by this script (``--serve``) after it registers a litellm
custom provider (``litellm.custom_provider_map``) that streams a prepared reply at a steady
token rate (a token: 4 characters), logging when each chunk left. A real LSP client (pygls,
tests/lsp_helpers.py) asks with a ``partialResultToken``. Printed: for each claim, the delay
between the provider emitting the claim's last character and the client receiving a snapshot
holding it (target <= 1 s); the time to the first verified claim and to the whole answer. Run
with ``support_check`` off (claim by claim) and ``model`` (streamed, each claim judged by its own
call as it verifies; the provider answers a verdict call after ``VERDICT_SECONDS``), then both
without a ``partialResultToken`` (nothing streamed; the model's check is one call after the reply).

    python bench/bench_streaming.py [--rate 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

PROVIDER = "benchstream"
REPLY_ENV = "BENCH_STREAM_REPLY"  # the prepared reply (a file)
LOG_ENV = "BENCH_STREAM_LOG"  # where the provider logs each chunk: time, characters sent
RATE_ENV = "BENCH_STREAM_RATE"  # tokens per second
TOKEN_CHARS = 4
VERDICT_SECONDS = 0.3  # the support check's latency per call: a small model's short reply
QUESTION = "How are API keys rotated?"
CLAIMS = [  # (text, path, the line's text): kept when the gate verifies them
    ("The old key is retired.", "keyvault/keys.py", "old.retired_at = now"),
    ("The new key is added to the store.", "keyvault/keys.py", "store.add(client, fresh)"),
    ("The rotation returns the new key.", "keyvault/keys.py", "return fresh"),
    ("A key needs rotation once it is older than the rotation period.", "keyvault/keys.py",
     "return now - self.current(client).created_at >= ROTATION_PERIOD_SECONDS"),
    ("A retired key stays valid during the grace period.", "keyvault/keys.py",
     "return now < self.retired_at + GRACE_PERIOD_SECONDS"),
]  # fmt: skip


def serve() -> int:
    """The server, with the provider registered first (the launcher)."""
    from codecite_lsp.core.environment import apply_defaults

    apply_defaults()
    import litellm
    from litellm import CustomLLM, ModelResponse
    from litellm.types.utils import GenericStreamingChunk

    reply = Path(os.environ[REPLY_ENV]).read_text()
    rate = float(os.environ[RATE_ENV])
    log = Path(os.environ[LOG_ENV])

    class Steady(CustomLLM):
        def completion(self, *args: Any, **kwargs: Any) -> ModelResponse:
            """Not streamed: the answer after the time streaming it takes, or the support
            check's verdicts (every claim entailed) after ``VERDICT_SECONDS``."""
            sent = str(kwargs.get("messages", [{}])[-1].get("content", ""))
            if '"cited_lines"' in sent:
                time.sleep(VERDICT_SECONDS)
                count = sent.count('"cited_lines"')
                text = json.dumps({"verdicts": [{"claim": n, "entailed": True}
                                                for n in range(1, count + 1)]})  # fmt: skip
            else:
                time.sleep(len(reply) / TOKEN_CHARS / rate)
                text = reply
            return ModelResponse(choices=[{"message": {"role": "assistant", "content": text}}])

        def streaming(self, *args: Any, **kwargs: Any) -> Iterator[GenericStreamingChunk]:
            started = time.time()
            with log.open("a") as out:
                for number, at in enumerate(range(0, len(reply), TOKEN_CHARS), start=1):
                    time.sleep(max(0.0, started + number / rate - time.time()))
                    piece = reply[at : at + TOKEN_CHARS]
                    out.write(json.dumps({"t": time.time(), "sent": at + len(piece)}) + "\n")
                    out.flush()
                    yield {"text": piece, "is_finished": False, "finish_reason": "", "usage": None}
            yield {"text": "", "is_finished": True, "finish_reason": "stop", "usage": None}

    litellm.custom_provider_map = [{"provider": PROVIDER, "custom_handler": Steady()}]
    from codecite_lsp.cli.run import main

    return main(["serve"])


def prepared(repo: Path) -> tuple[str, list[tuple[str, int]]]:
    """The reply (framing prose, then the claims that verify), and each claim's text with the
    offset just past its span object's last character."""
    from answer_helpers import cite, sources_for

    from codecite_lsp.answer.pipeline import Answerer
    from codecite_lsp.core.config import Config
    from codecite_lsp.index.indexer import Indexer
    from codecite_lsp.verify.gate import GatePassed, verify

    config = Config(embedding="none")
    Indexer(repo, config).run()
    sources = sources_for(Answerer(repo, config), QUESTION)
    spans: list[dict[str, Any]] = [{"kind": "prose", "text": "Here is how it works:"}]
    for text, path, line in CLAIMS:
        span = {"kind": "claim", "text": text, "citations": [cite(sources, path, line)]}
        if isinstance(verify(json.dumps({"spans": [span]}), sources, QUESTION), GatePassed):
            spans.append(span)
    body = [json.dumps(span) for span in spans]
    reply = '{"spans": [' + ", ".join(body) + '], "refuse": null}'
    ends, at = [], len('{"spans": [')
    for span, text in zip(spans, body, strict=True):
        at += len(text)
        if span["kind"] == "claim":
            ends.append((str(span["text"]), at))
        at += 2
    return reply, ends


async def ask(repo: Path, scratch: Path, rate: float, check: str, token: bool) -> dict[str, Any]:
    from lsp_helpers import init_params, partial_results_client, server_env, wait_indexed

    reply, ends = prepared(repo)
    (scratch / "reply.json").write_text(reply)
    log = scratch / f"emitted-{check}.jsonl"
    env = server_env(**{REPLY_ENV: str(scratch / "reply.json"), LOG_ENV: str(log),
                        RATE_ENV: str(rate), "HOME": str(scratch)})  # fmt: skip
    client = partial_results_client()
    await client.start_io(sys.executable, str(Path(__file__).resolve()), "--serve", env=env)
    settings = {"model": f"{PROVIDER}/steady", "embedding": "none", "support_check": check,
                "tool_loop": "off", "model_retries": 0}  # fmt: skip
    await client.initialize_session(init_params("visual-studio-code", repo, settings))
    await wait_indexed(client)
    partial = client.partial
    started = time.time()
    params = {"question": QUESTION} | ({"partialResultToken": "bench"} if token else {})
    answer = await partial.ask(client, params)
    answered = time.time()
    await client.shutdown_session()
    await client.stop()

    if not token:
        return {"whole": answered - started}
    emitted = [json.loads(line) for line in log.read_text().splitlines()]
    times, values = partial.received.get("bench", []), partial.values.get("bench", [])
    snapshots = list(zip(times, values, strict=True))
    delays = []
    for text, end in ends:
        wrote = next(row["t"] for row in emitted if row["sent"] >= end)
        holding = (
            t for t, value in snapshots if any(s.get("text") == text for s in value["spans"])
        )
        seen = next(holding, answered)
        delays.append((text, wrote - started, seen - wrote))
    status = getattr(answer, "status", None) or answer.get("status")
    return {"check": check, "delays": delays, "whole": answered - started, "status": status,
            "reply_done": emitted[-1]["t"] - started, "snapshots": len(snapshots)}  # fmt: skip


def main() -> None:
    if "--serve" in sys.argv:
        sys.exit(serve())
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=40.0, help="tokens per second")
    args = parser.parse_args()
    import shutil

    from lsp_helpers import FIXTURE

    print(f"the support check's verdict calls answer after {VERDICT_SECONDS * 1000:.0f} ms")
    for check, token in (("off", True), ("model", True), ("off", False), ("model", False)):
        with tempfile.TemporaryDirectory() as scratch:
            repo = Path(scratch) / "repo"
            shutil.copytree(FIXTURE, repo)
            result = asyncio.run(ask(repo, Path(scratch), args.rate, check, token))
        if not token:  # the same reply, nothing streamed: the whole answer as before
            print(f"support_check = {check}, no partialResultToken: whole answer "
                  f"{result['whole']:.2f} s")  # fmt: skip
            continue
        print(
            f"support_check = {check}: {result['status']}, {result['snapshots']} snapshots, "
            f"reply streamed in {result['reply_done']:.2f} s at {args.rate:g} tokens/s"
        )
        for text, wrote, delay in result["delays"]:
            late = f"on the client {delay * 1000:6.0f} ms later"
            print(f"  claim written at {wrote:5.2f} s, {late}: {text}")
        first = min(wrote + delay for _, wrote, delay in result["delays"])
        print(f"  first verified claim {first:.2f} s; whole answer {result['whole']:.2f} s")


if __name__ == "__main__":
    main()
