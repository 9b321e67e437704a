"""The manifest's pure parts: what it records of a pass, and that anything but a manifest this
version wrote reads as "no manifest" (the normal pass runs), never as an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from codecite_lsp.core.config import Config
from codecite_lsp.index.manifest import build, from_json, settings_of, to_json
from codecite_lsp.index.passes import IndexReport
from codecite_lsp.ingest.scan import Skip, WorkspaceFile

INDEX = Path("/repo/.codecite")


def made() -> str:
    files = [WorkspaceFile("a.py", 10, 1, 2), WorkspaceFile("b.bin", 4, 3, 4)]
    skipped = [Skip(".env", "secret file"), Skip("b.bin", "binary file")]
    report = IndexReport(1, 3, 0.5, 1, 0, skipped)
    return to_json(build(Config(), INDEX, files, report, {"meta.json": (200, 5)}))


def test_a_manifest_keeps_the_walk_the_content_refusals_and_the_counts() -> None:
    manifest = from_json(made())
    assert manifest is not None
    assert manifest.files == {"a.py": (10, 1, 2), "b.bin": (4, 3, 4)}
    # .env was refused by the walk, which refuses it again by itself; b.bin only when read.
    assert manifest.content_skips == {"b.bin": "binary file"}
    assert (manifest.indexed_files, manifest.chunks) == (1, 3)
    assert manifest.settings == settings_of(Config(), INDEX)


def test_only_settings_that_change_an_index_count() -> None:
    base = settings_of(Config(), INDEX)
    assert settings_of(Config(model="gpt-4o", context_chunks=3, hover=False), INDEX) == base
    assert settings_of(Config(chunk_budget=900), INDEX) != base
    assert settings_of(Config(embedding="none"), INDEX) != base
    assert settings_of(Config(), Path("/elsewhere")) != base


@pytest.mark.parametrize(
    "text",
    [
        "",
        "null",
        "[]",
        '{"files": [',
        "[" * 100_000 + "]" * 100_000,
        made().replace('"format":1', '"format":0'),
        made().replace("[10,1,2]", "[10,1]"),
        made().replace("[10,1,2]", "10"),
        made().replace('"chunks":3', '"chunks":"many"'),
        made().replace('"settings":{', '"settings":[{').replace(',"files"', '],"files"', 1),
    ],
)
def test_anything_else_reads_as_no_manifest(text: str) -> None:
    assert from_json(text) is None
