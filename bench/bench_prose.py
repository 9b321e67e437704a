"""The prose rule on framing and facts as providers write them.

    python bench/bench_prose.py

Reads tests/fixtures/prose/calibration.json (framing openers and fact-stating sentences in the
styles of OpenAI, Anthropic, Gemini and Llama models, each with its question) and puts each one
through the citation gate beside a verified claim. Prints how many framing openers were rejected
(target: at most 1 in 40) and how many fact-stating sentences were accepted (target: 0), per
provider style, with the rejected and accepted texts. A count ("There are three steps:") frames
only above that many claims; beside one claim it is among the facts.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codecite_lsp.core.records import content_hash, outside_source  # noqa: E402
from codecite_lsp.verify.gate import GatePassed, verify  # noqa: E402

LINE = "old.retired_at = now"
SOURCE = outside_source(
    label="S1",
    path="keys.py",
    start_line=1,
    end_line=1,
    text=LINE,
    symbol=None,
    content_hash=content_hash(LINE),
    revision="rev",
    start_byte=0,
)
CLAIM = {
    "kind": "claim",
    "text": "The old key is retired.",
    "citations": [{"source": "S1", "start_line": 1, "end_line": 1, "quote": LINE}],
}


def passes(text: str, question: str) -> bool:
    reply = {"spans": [{"kind": "prose", "text": text}, CLAIM]}
    return isinstance(verify(reply, [SOURCE], question), GatePassed)


def main() -> int:
    data = json.loads((ROOT / "tests" / "fixtures" / "prose" / "calibration.json").read_text())
    questions = data["questions"]
    rejected = [e for e in data["framing"] if not passes(e["text"], questions[e["question"]])]
    accepted = [e for e in data["facts"] if passes(e["text"], questions[e["question"]])]
    styles = Counter(e["style"] for e in data["framing"])
    print(f"framing openers rejected: {len(rejected)} of {len(data['framing'])}")
    for style, count in sorted(styles.items()):
        missed = sum(e["style"] == style for e in rejected)
        print(f"  {style:10} {missed} of {count}")
    for entry in rejected:
        print(f"  REJECTED {entry['text']!r}")
    print(f"fact-stating sentences accepted: {len(accepted)} of {len(data['facts'])}")
    for entry in accepted:
        print(f"  ACCEPTED {entry['text']!r}")
    ok = len(rejected) * 40 <= len(data["framing"]) and not accepted
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
