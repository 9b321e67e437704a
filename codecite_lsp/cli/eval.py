"""``codecite eval``: recorded model replies replayed through the gate (a release gate for CI)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def cmd_eval(args: argparse.Namespace) -> int:
    """Exit 0 only when no unverified statement is shown, every outcome is as expected and at
    most 2% of valid replies are refused."""
    from ..answer.replay import CorpusError, read_corpus, report_lines, run

    path = Path(args.corpus)
    try:
        corpus = read_corpus(path)
    except OSError as exc:
        print(f"codecite: cannot replay {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except CorpusError as exc:
        print(f"codecite: cannot replay {path}: {exc}", file=sys.stderr)
        return 2
    report = run(corpus)
    if args.json:
        print(json.dumps({**report.summary(), "passed": report.passed}, indent=2))
    else:
        print("\n".join(report_lines(report, str(path))))
    return 0 if report.passed else 1
