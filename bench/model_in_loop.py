"""A model in the loop, one call at a time: the exact prompts of ``codecite ask`` written to
files, a model's replies read back from files, each through litellm's ``mock_response`` so
everything around the model is the real path (retrieval, prompt, tool loop, gate, retry, the
support check).

    python bench/model_in_loop.py --questions FILE --work DIR [--model M] [--set key=value]

``FILE`` holds lines ``package | question`` (an installed package, copied and indexed once
under ``DIR/repos``). Each run answers every question as far as the replies in
``DIR/replies`` reach: a call whose reply is missing writes its prompt to
``DIR/pending/<key>.txt`` (the messages, the reply shape asked for, the tools offered) and that
question stops there. Whoever plays the model writes ``DIR/replies/<key>.json``: the reply's
text, exactly as the model would send it (an answer object, ``{"more": ...}``, or
``{"tool_calls": [...]}``). Run again until nothing is pending; then the figures:

- questions whose answer passed on the first reply (no retry, no claim removed, not refused);
- claims shown, claims removed (by the gate's per-claim dropping or the support check), and
  answers refused, with the reason;
- each removed claim and the reason given, so a reader can judge whether it was true.

The key of a call is the hash of its messages: the same prompt gets the same reply on a rerun,
and a changed prompt (a rule changed) asks again.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sysconfig
from pathlib import Path
from typing import Any

from file_replies import Pending, reply

from codecite_lsp.answer.llm import MockReplies, ModelReply
from codecite_lsp.answer.pipeline import Answerer
from codecite_lsp.cli.ask import _Root as AskRoot
from codecite_lsp.core.answers import Answered, Refused
from codecite_lsp.core.config import Config
from codecite_lsp.index.indexer import Indexer
from codecite_lsp.service.tools import RootTools

SITE = Path(sysconfig.get_paths()["purelib"])


class FileModel(Answerer):
    """An Answerer whose model reads its replies from files (through litellm's mock)."""

    def __init__(self, repo: Path, config: Config, work: Path, question_id: str) -> None:
        super().__init__(repo, config)
        self.work, self.question_id = work, question_id
        self.calls: list[str] = []

    def _complete(  # type: ignore[override]
        self,
        messages: list[dict[str, Any]],
        schema: dict[str, Any] | None,
        cancel: Any,
        retries: int,
        tools: list[dict[str, Any]] | None = None,
        timeout: float | None = None,
        listener: Any = None,
    ) -> ModelReply:
        place = f"{self.question_id}-{len(self.calls) + 1:02d}"
        key, text = reply(self.work, place, messages, schema, tools)
        self.calls.append(key)
        self.replies = MockReplies([text])
        return super()._complete(messages, schema, cancel, retries, tools, timeout, listener)


def repository(work: Path, package: str) -> Path:
    repo = work / "repos" / package
    if not repo.exists():
        shutil.copytree(SITE / package, repo / package, ignore=shutil.ignore_patterns("*.pyc"))
    return repo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--model", default="openai/gpt-4o-mini")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--json", type=Path, help="write every question's outcome here")
    args = parser.parse_args()
    settings: dict[str, Any] = {"model": args.model}
    for item in args.set:
        key, _, value = item.partition("=")
        settings[key] = value
    config = Config(**settings)
    questions = []
    for line in args.questions.read_text(encoding="utf-8").splitlines():
        if "|" in line and not line.lstrip().startswith("#"):
            package, question = (part.strip() for part in line.split("|", 1))
            questions.append((package, question))
    args.work.mkdir(parents=True, exist_ok=True)
    indexed: set[str] = set()
    outcomes: list[dict[str, Any]] = []
    for number, (package, question) in enumerate(questions, start=1):
        repo = repository(args.work, package)
        if package not in indexed:
            Indexer(repo, config).run()
            indexed.add(package)
        root = AskRoot(repo, config)  # what `codecite ask` gives the tools, with this model
        answerer = root.answerer = FileModel(repo, config, args.work, f"q{number:02d}")
        try:
            answer = answerer.ask(question, tools=RootTools(root))
        except Pending as exc:
            outcomes.append({"id": number, "question": question, "pending": str(exc)})
            continue
        outcomes.append(outcome(number, question, answer, answerer))
    report(outcomes)
    if args.json:
        args.json.write_text(json.dumps(outcomes, indent=1), encoding="utf-8")


def outcome(
    number: int, question: str, answer: Answered | Refused, model: FileModel
) -> dict[str, Any]:
    """What the user saw of one question, and what the trace says happened on the way."""
    trace = model.trace.records()[-1]
    row: dict[str, Any] = {
        "id": number,
        "question": question,
        "calls": model.calls,
        "retries": trace["retries"],
        "removed": trace["statements_removed"],
        "support": trace["support_check"],
    }
    if isinstance(answer, Refused):
        return row | {"refused": answer.reason, "detail": answer.detail}
    claims = [span for span in answer.spans if span.kind == "claim"]
    row["claims"] = len(claims)
    row["shown"] = [span.text for span in claims]
    row["note"] = answer.note
    unsupported = (trace["support_check"] or {}).get("unsupported") or []
    # The first reply passed the gate: the check ran on it (it runs on every reply the gate
    # passes), or nothing was retried nor removed (the check off).
    first = (trace["attempts"] or [{}])[0]
    passed = "support_check" in first or (trace["retries"] == 0 and not trace["statements_removed"])
    row["first_try"] = passed
    row["first_checked"] = passed and not (first.get("support_check") or {}).get("unsupported")
    row["checked_out"] = len(unsupported)  # claims the check removed from what is shown
    return row


def report(outcomes: list[dict[str, Any]]) -> None:
    pending = [row for row in outcomes if "pending" in row]
    done = [row for row in outcomes if "pending" not in row]
    print(f"questions {len(outcomes)}: answered or refused {len(done)}, pending {len(pending)}")
    first = sum(1 for row in done if row.get("first_try"))
    whole = sum(1 for row in done if row.get("first_checked"))
    refused = sum(1 for row in done if "refused" in row)
    removed = sum(row.get("removed", 0) + row.get("checked_out", 0) for row in done)
    print(
        f"first reply passed the gate: {first} of {len(done)}; and lost no claim to the support "
        f"check: {whole}; claims removed from the answers shown {removed}; refused {refused}"
    )
    for row in outcomes:
        print(json.dumps(row, ensure_ascii=False))


if __name__ == "__main__":
    main()
