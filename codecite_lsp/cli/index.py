"""``codecite index``: a pass (answered from a stat walk when nothing changed), or with
``--publish`` the shared base of HEAD written.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from ..core.config import Config
from .common import OUTDATED, print_skips, run_index, say_base, why_index_first


def _say_removed(repo: Path, config: Config) -> None:
    """What making the base's copy removed of the earlier ones (after the pass, which waits for
    the copy), on stderr."""
    if not config.base:
        return
    from ..index.base import OpenedBase, opened

    found = opened(repo, config, config.resolved_index_dir(repo))
    if isinstance(found, OpenedBase) and (found.removed.copies or found.removed.leftovers):
        print(f"codecite: base {config.base}: {found.removed}", file=sys.stderr)


def _cmd_publish(args: argparse.Namespace, repo: Path, config: Config) -> int:
    """Index every file (no base under it) and write the index as HEAD's base at the URI."""
    from dataclasses import replace

    from ..core.config import check_base
    from ..index.base import BaseError, head_commit, publish, tracked_changes
    from ..index.indexer import IndexBusy, Indexer
    from ..index.store import IndexDamaged

    uri = args.publish
    try:
        check_base(uri)
        commit = head_commit(repo)
        changed = tracked_changes(repo)
        if changed:
            raise BaseError(
                f"{len(changed)} tracked files differ from HEAD ({', '.join(changed[:3])}): a"
                " base must hold its commit's own files; commit or stash them first"
            )
        whole = replace(config, base=None)
        indexer = Indexer(repo, whole)
        report = run_index(indexer, args.quiet)
        published = publish(indexer.store, whole, commit, uri)
    except (ValueError, BaseError, IndexBusy, IndexDamaged) as exc:
        print(f"codecite: not published: {exc}", file=sys.stderr)
        return 1
    print(report.summary())
    print(
        f"published the base of {commit[:12]} to {uri}: {len(published.files)} files,"
        f" {published.chunks} chunks, embedder {published.embedder or 'none'}"
    )
    return 0


def cmd_index(args: argparse.Namespace, repo: Path, config: Config) -> int:
    """Index the repository (or publish its base), saying what was skipped and flagged."""
    from ..index import manifest

    if args.publish:
        return _cmd_publish(args, repo, config)
    say_base(repo, config)
    # Nothing changed since the last complete pass: answered from a stat walk, without
    # importing lancedb (seconds); anything different runs the pass, which fixes it.
    report = None
    note = config.index_dir_note(repo)  # the repository cannot be written: where the index is
    said = f" - {note}" if note else ""
    # With a base, which one HEAD descends from may have changed without any file changing.
    if not os.environ.get(manifest.BYPASS_ENV) and not config.base:
        report = manifest.unchanged_since_last_pass(repo, config)
    if report is not None:
        print_skips(report)
        print(report.summary() + said)
        return 0
    from ..index.indexer import IndexBusy, Indexer
    from ..index.store import IndexDamaged

    if (why_index_first(repo, config) or "").startswith(OUTDATED):
        print(f"codecite: {OUTDATED}; rebuilding it", file=sys.stderr)
    try:
        indexer = Indexer(repo, config)
        report = run_index(indexer, args.quiet)
    except (IndexBusy, IndexDamaged) as exc:  # locked too long; or unusable even rebuilt
        print(f"codecite: {exc}", file=sys.stderr)
        return 1
    _say_removed(repo, config)
    print(report.summary() + said)
    flagged = indexer.store.tables.untrusted_chunks()
    if flagged:
        print(_untrusted_summary(flagged))
    return 0


UNTRUSTED_LISTED = 10  # files named in the index report's untrusted line


def _untrusted_summary(flagged: Mapping[str, int]) -> str:
    """The index report's line on the chunks holding text addressed to an AI model."""
    files = sorted(flagged, key=lambda path: (-flagged[path], path))
    named = ", ".join(f"{path} ({flagged[path]})" for path in files[:UNTRUSTED_LISTED])
    more = f" and {len(files) - UNTRUSTED_LISTED} more" if len(files) > UNTRUSTED_LISTED else ""
    return (
        f"{sum(flagged.values())} chunks in {len(files)} files hold text addressed to an AI model"
        f" (shown to a model as untrusted data; no claim rests on them alone): {named}{more}"
    )
