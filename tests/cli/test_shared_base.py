"""A shared base on a real S3-protocol server (moto's, on 127.0.0.1): CI publishes the index of a
commit, a teammate's `codecite` (another process, another clone) reads it and indexes only what
differs locally; a base that does not fit is refused with its reason and the local index goes
on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from object_store import BUCKET, FILES, clone, codecite, committed, free_port, git, s3_server

from codecite_lsp.core.config import Config


@pytest.fixture(scope="module")
def store_env() -> Iterator[dict[str, str]]:
    with s3_server(free_port()) as env:
        yield env


class Found(dict[str, list[str]]):
    """Each query's result paths, with what the search process logged (said when one differs)."""

    def __init__(self, paths: dict[str, list[str]], stderr: str, repo: Path) -> None:
        super().__init__(paths)
        self.stderr = stderr
        self.repo = repo

    def __repr__(self) -> str:
        import lancedb

        try:  # what the overlay holds, read apart from codecite
            chunks = lancedb.connect(self.repo / ".codecite" / "lance").open_table("chunks")
            held = f"{chunks.to_arrow().column('path').to_pylist()}, {chunks.list_indices()}"
        except Exception as exc:  # the message is for a failure: never raise from it
            held = f"unreadable ({exc})"
        logged = self.stderr.strip() or "nothing"
        return f"{dict(self)!r}; the search logged: {logged}; the overlay holds {held}"


def _paths(repo: Path, env: dict[str, str], *queries: str) -> Found:
    """Each query's result paths, from one `codecite search` process."""
    listed = repo.parent / "queries.txt"
    listed.write_text("\n".join(queries), encoding="utf-8")
    done = codecite(repo, env, "search", "--queries", str(listed), "--json")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    paths = {line["query"]: [r["path"] for r in line["results"]] for line in lines}
    return Found(paths, done.stderr, repo)


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory, store_env: dict[str, str]) -> Path:
    """CI's checkout, whose HEAD's base was published to s3://BUCKET/team."""
    ci = committed(tmp_path_factory.mktemp("ci") / "repo", FILES)
    # the scratch folder of a publisher killed earlier (no process has so high a pid)
    leftover = Config().resolved_index_dir(ci) / f".{'ab' * 20}.tmp4194999.publish" / "lance"
    leftover.mkdir(parents=True)
    done = codecite(ci, store_env, "index", "--publish", f"s3://{BUCKET}/team")
    assert done.returncode == 0, done.stderr
    assert f"published the base of {git(ci, 'rev-parse', 'HEAD')[:12]}" in done.stdout
    return ci


def test_a_killed_publisher_leaves_no_scratch_folder_behind(published: Path) -> None:
    index_dir = Config().resolved_index_dir(published)
    left = [p.name for p in index_dir.iterdir() if ".tmp" in p.name]
    assert left == []


def _teammate(published: Path, tmp_path: Path) -> Path:
    return clone(published, tmp_path / "mine")


def test_a_teammate_reads_the_base_and_indexes_only_what_differs(
    published: Path, tmp_path: Path, store_env: dict[str, str]
) -> None:
    mine = _teammate(published, tmp_path)
    (mine / "changed.py").write_text(
        "def changed_function():\n    return 'newheron replaced it'\n", encoding="utf-8"
    )
    (mine / "deleted.py").unlink()
    (mine / "added.py").write_text("def added_function():\n    return 'ibisadded'\n")
    env = {**store_env, "CODECITE_BASE": f"s3://{BUCKET}/team"}

    done = codecite(mine, env, "index")
    assert done.returncode == 0, done.stderr
    assert "not used" not in done.stderr
    # the overlay holds the changed and the added file, nothing of the base
    assert done.stdout.startswith("indexed 2 files"), done.stdout

    # another process: the base read from its local copy, the overlay over it
    found = _paths(
        mine, env, "zebraquartz", "ocelotnote", "newheron", "oldmarmot", "ibisadded",
        "walrusgone deleted_function",
    )  # fmt: skip
    assert found["zebraquartz"] == ["kept.py"], found
    assert found["ocelotnote"] == ["docs/notes.md"], found
    assert found["newheron"] == ["changed.py"], found
    assert found["oldmarmot"] == [], found  # the base's rows of the edited file: masked
    assert found["ibisadded"] == ["added.py"], found
    assert "deleted.py" not in found["walrusgone deleted_function"], found

    # edited back to the base's content: the base's rows show again, the overlay drops it
    (mine / "changed.py").write_text(FILES["changed.py"], encoding="utf-8")
    again = codecite(mine, env, "index")
    assert again.stdout.startswith("indexed 1 files"), again.stdout
    assert _paths(mine, env, "oldmarmot", "newheron") == {
        "oldmarmot": ["changed.py"],
        "newheron": [],
    }


def test_an_unreachable_store_is_said_and_the_local_index_goes_on(
    tmp_path: Path, store_env: dict[str, str]
) -> None:
    mine = committed(tmp_path / "repo", FILES)
    env = {
        **store_env,
        "AWS_ENDPOINT": f"http://127.0.0.1:{free_port()}",  # nothing listens there
        "CODECITE_BASE": f"s3://{BUCKET}/team",
    }
    done = codecite(mine, env, "index")
    assert done.returncode == 0, done.stderr
    assert f"base s3://{BUCKET}/team not used: the base store" in done.stderr
    assert "cannot be read" in done.stderr
    assert done.stdout.startswith("indexed 4 files"), done.stdout
    assert _paths(mine, env, "zebraquartz") == {"zebraquartz": ["kept.py"]}


def test_a_base_built_with_other_settings_is_refused_naming_the_difference(
    tmp_path: Path, store_env: dict[str, str]
) -> None:
    ci = committed(tmp_path / "ci", FILES)
    other = {**store_env, "CODECITE_CHUNK_BUDGET": "900"}
    assert codecite(ci, other, "index", "--publish", f"s3://{BUCKET}/small").returncode == 0
    mine = _teammate(ci, tmp_path)
    env = {**store_env, "CODECITE_BASE": f"s3://{BUCKET}/small"}
    done = codecite(mine, env, "index")
    assert done.returncode == 0, done.stderr
    assert "was built with other settings: chunk_budget=900 (here 1800)" in done.stderr
    assert done.stdout.startswith("indexed 4 files"), done.stdout  # every file, locally


def test_no_base_of_an_ancestor_is_said(
    published: Path, tmp_path: Path, store_env: dict[str, str]
) -> None:
    unrelated = committed(tmp_path / "other", {"x.py": "def x():\n    return 1\n"})
    env = {**store_env, "CODECITE_BASE": f"s3://{BUCKET}/team"}
    done = codecite(unrelated, env, "index")
    assert done.returncode == 0, done.stderr
    assert "is HEAD or an ancestor of it" in done.stderr


def test_an_object_store_index_dir_is_refused_and_nothing_is_written(
    tmp_path: Path, store_env: dict[str, str]
) -> None:
    mine = committed(tmp_path / "repo", FILES)
    done = codecite(mine, store_env, "index", "--index-dir", f"s3://{BUCKET}/x")
    assert done.returncode == 2
    assert "index_dir must be a local folder" in done.stderr
    assert not (mine / "s3:").exists() and not (Path.cwd() / "s3:").exists()


def test_settings_that_carry_credentials_are_refused_with_where_keys_belong(
    tmp_path: Path,
) -> None:
    mine = committed(tmp_path / "repo", FILES)
    (mine / ".codecite.toml").write_text(
        'base = "s3://AKIAEXAMPLE:hunter2@codecite-bases/team"\n'
        'aws_secret_access_key = "hunter2"\n',
        encoding="utf-8",
    )
    done = codecite(mine, {}, "index")
    assert done.returncode == 2
    assert "base s3://codecite-bases/team refused: credentials are never read" in done.stderr
    assert "'aws_secret_access_key' refused: credentials are never read" in done.stderr
    assert "hunter2" not in done.stderr and "AKIAEXAMPLE" not in done.stderr
    assert not (mine / ".codecite").exists()


def test_a_base_in_a_local_folder_serves_an_air_gapped_teammate(tmp_path: Path) -> None:
    ci = committed(tmp_path / "ci", FILES)
    shared = tmp_path / "shared-bases"
    assert codecite(ci, {}, "index", "--publish", str(shared)).returncode == 0
    mine = clone(ci, tmp_path / "mine")
    (mine / "added.py").write_text("def added_function():\n    return 'ibisadded'\n")
    env = {"CODECITE_BASE": str(shared)}
    done = codecite(mine, env, "index")
    assert done.stdout.startswith("indexed 1 files"), done.stdout + done.stderr
    assert _paths(mine, env, "zebraquartz", "ibisadded") == {
        "zebraquartz": ["kept.py"],
        "ibisadded": ["added.py"],
    }


def test_the_base_carries_its_semantic_vectors_and_a_teammate_embeds_only_its_own(
    tmp_path: Path,
) -> None:
    """CI embeds every chunk for the semantic leg once; the teammate takes those vectors with
    the base and embeds only the chunk of the file it added."""
    record = 32 + 384 * 2  # a content hash and a half-precision MiniLM vector
    ci = committed(tmp_path / "ci", FILES)
    shared = tmp_path / "shared-bases"
    on = {"CODECITE_MEANING": "minilm"}
    assert codecite(ci, on, "index", "--publish", str(shared)).returncode == 0
    vectors = Path("embedding") / "minilm-l6-int8-64.vec"
    published = (Config().resolved_index_dir(ci) / vectors).stat().st_size // record
    assert published >= len(FILES) - 1  # every file of the base has its chunks embedded
    mine = clone(ci, tmp_path / "mine")
    (mine / "added.py").write_text("def added_function():\n    return 'ibisadded'\n")
    done = codecite(mine, {**on, "CODECITE_BASE": str(shared)}, "index")
    assert done.returncode == 0, done.stderr
    held = (Config().resolved_index_dir(mine) / vectors).stat().st_size // record
    assert held == published + 1


def test_an_answer_over_the_base_cites_the_working_tree(
    published: Path, tmp_path: Path, store_env: dict[str, str]
) -> None:
    mine = _teammate(published, tmp_path)
    env = {**store_env, "CODECITE_BASE": f"s3://{BUCKET}/team", "CODECITE_MODEL": "extractive"}
    done = codecite(mine, env, "ask", "What does kept_function return? zebraquartz", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["status"] == "answered", answer
    cited = [c for span in answer["spans"] for c in span.get("citations", [])]
    assert any(c["path"] == "kept.py" for c in cited), answer
    for citation in cited:  # every quote is the file's text on disk, lines as they are now
        lines = (mine / citation["path"]).read_text().splitlines()
        quoted = "\n".join(lines[citation["start_line"] - 1 : citation["end_line"]])
        assert citation["quote"].strip() in quoted


def _published_to_folder(tmp_path: Path) -> tuple[Path, Path, str]:
    ci = committed(tmp_path / "ci", FILES)
    shared = tmp_path / "shared-bases"
    assert codecite(ci, {}, "index", "--publish", str(shared)).returncode == 0
    return ci, shared, git(ci, "rev-parse", "HEAD").strip()


def test_a_packed_folder_naming_a_file_outside_it_is_refused(tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    ci, shared, sha = _published_to_folder(tmp_path)
    db = lancedb.connect(shared)
    packed = db.open_table(f"folder-{sha}").to_arrow()
    data = pa.compress(b"written", codec="zstd", asbytes=True)
    escape = pa.table(
        {
            "path": ["../../../escaped.txt"],
            "size": pa.array([7], pa.int64()),
            "data": pa.array([data], pa.large_binary()),
        }
    )
    db.create_table(f"folder-{sha}", pa.concat_tables([packed, escape]), mode="overwrite")
    mine = clone(ci, tmp_path / "mine")
    env = {"CODECITE_BASE": str(shared)}
    done = codecite(mine, env, "index")
    assert done.returncode == 0, done.stderr
    assert "names a file outside it ('../../../escaped.txt')" in done.stderr
    assert not list(tmp_path.rglob("escaped.txt"))
    # the refused copy is not kept: nothing half-written is read later
    assert not list((mine / ".codecite" / "base").iterdir())
    _every_file_is_local(mine, env, done, "names a file outside it")


def _every_file_is_local(
    mine: Path, env: dict[str, str], done: subprocess.CompletedProcess[str], why: str
) -> None:
    """After a base whose copy failed: the local index holds every file, on every run, and
    each command says the base was not used and why (issue 42)."""
    said = f"base {env['CODECITE_BASE']} not used: "
    assert said in done.stderr and "the local index holds every file" in done.stderr, done.stderr
    assert done.stdout.startswith(f"indexed {len(FILES)} files"), done.stdout
    again = codecite(mine, env, "index")  # the base is tried again, and fails again
    assert again.returncode == 0 and said in again.stderr, again.stderr
    assert "(0 written, 0 deleted" in again.stdout, again.stdout  # no file dropped, re-added
    listed = mine.parent / "queries.txt"
    listed.write_text("zebraquartz\nocelotnote", encoding="utf-8")
    search = codecite(mine, env, "search", "--queries", str(listed), "--json")
    assert search.returncode == 0, search.stderr
    found = {
        line["query"]: [r["path"] for r in line["results"]]
        for line in map(json.loads, search.stdout.splitlines())
    }
    assert found == {"zebraquartz": ["kept.py"], "ocelotnote": ["docs/notes.md"]}, search.stderr
    assert said in search.stderr and why in search.stderr, search.stderr


def test_a_base_cut_off_mid_copy_leaves_every_file_in_the_local_index(tmp_path: Path) -> None:
    ci, shared, sha = _published_to_folder(tmp_path)
    for data in (shared / f"folder-{sha}.lance" / "data").iterdir():
        data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])  # the store cut off
    mine = clone(ci, tmp_path / "mine")
    env = {"CODECITE_BASE": str(shared)}
    done = codecite(mine, env, "index")
    assert done.returncode == 0, done.stderr
    _every_file_is_local(mine, env, done, "cannot be copied")


@pytest.mark.parametrize(
    "failure",
    [OSError(28, "No space left on device"), ValueError("a table of another schema")],
    ids=["full disk", "unexpected"],
)
def test_a_copy_failing_for_any_reason_leaves_every_file_local(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    failure: Exception,
) -> None:
    from codecite_lsp.cli import main
    from codecite_lsp.index.base import fetch

    ci, shared, _sha = _published_to_folder(tmp_path)
    mine = clone(ci, tmp_path / "mine")

    def unpack(packed: object, lance_dir: Path) -> None:
        raise failure

    monkeypatch.setattr(fetch, "_unpack", unpack)
    monkeypatch.setenv("CODECITE_BASE", str(shared))
    monkeypatch.setenv("CODECITE_EMBEDDING", "none")
    assert main(["index", "--quiet", "--repo", str(mine)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"indexed {len(FILES)} files, {len(FILES)} chunks"), out + err
    assert main(["search", "zebraquartz", "--json", "--repo", str(mine)]) == 0
    out, err = capsys.readouterr()
    assert [r["path"] for r in json.loads(out)["results"]] == ["kept.py"], err
    assert f"base {shared} not used: " in err and str(failure) in err, err


def test_a_teammates_edits_are_embedded_with_the_bases_model(tmp_path: Path) -> None:
    from codecite_lsp.index.static_embedding import static_model_path

    # enough chunks for the default embedding to be trained at publish time
    many = {f"mod{i}.py": f"def helper_{i}():\n    return 'word{i} value'\n" for i in range(120)}
    ci = committed(tmp_path / "ci", {**FILES, **many})
    shared = tmp_path / "shared-bases"
    embedding = {"CODECITE_EMBEDDING": "default"}
    assert codecite(ci, embedding, "index", "--publish", str(shared)).returncode == 0
    mine = clone(ci, tmp_path / "mine")
    (mine / "changed.py").write_text("def changed_function():\n    return 'newheron'\n")
    env = {**embedding, "CODECITE_BASE": str(shared)}
    done = codecite(mine, env, "index")
    assert done.stdout.startswith("indexed 1 files"), done.stdout + done.stderr
    # the overlay's vectors are comparable with the base's: one model, the one CI trained
    published = static_model_path(ci / ".codecite").read_bytes()
    sha = git(ci, "rev-parse", "HEAD").strip()
    assert static_model_path(mine / ".codecite").read_bytes() == published
    assert static_model_path(mine / ".codecite" / "base" / sha).read_bytes() == published
    found = _paths(mine, env, "newheron", "zebraquartz")
    assert (found["newheron"][:1], found["zebraquartz"][:1]) == (["changed.py"], ["kept.py"]), found


READER = """
import sys
from pathlib import Path
from codecite_lsp.core.config import load_config
from codecite_lsp.index.base import opened
repo = Path(sys.argv[1])
config = load_config(repo)
print(opened(repo, config, config.resolved_index_dir(repo)).folder().name, flush=True)
sys.stdin.read()  # reading its copy until told to end, as a server does
"""


def _next_base(ci: Path, shared: Path, number: int) -> str:
    """CI commits a new file and publishes that commit's base; its sha."""
    (ci / f"new{number}.py").write_text(f"def new_{number}():\n    return 'kiwi{number}'\n")
    git(ci, "add", "-A")
    git(ci, "-c", "user.name=ci", "-c", "user.email=ci@example.invalid", "commit", "-qm", "next")
    assert codecite(ci, {}, "index", "--publish", str(shared)).returncode == 0
    return git(ci, "rev-parse", "HEAD").strip()


def test_earlier_copies_are_removed_but_the_newest_and_one_a_process_reads(tmp_path: Path) -> None:
    ci, shared, first = _published_to_folder(tmp_path)
    mine = clone(ci, tmp_path / "mine")
    env = {"CODECITE_BASE": str(shared)}
    copies = mine / ".codecite" / "base"
    assert codecite(mine, env, "index").returncode == 0
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(mine)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "CODECITE_EMBEDDING": "none", **env},
    )  # fmt: skip
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == first
        killed = copies / f".{first}.tmp999999999.1"  # half made by a process that is gone
        (killed / "lance").mkdir(parents=True)
        (killed / "lance" / "part").write_bytes(b"x" * 100_000)
        running = copies / f".{first}.tmp{os.getpid()}.1"  # one a live process is making
        running.mkdir()
        shas = [first]
        for number in (2, 3):  # the teammate pulls; each new HEAD has a base of its own
            shas.append(_next_base(ci, shared, number))
            git(mine, "pull", "-q", "--ff-only")
            done = codecite(mine, env, "index")
            assert done.returncode == 0, done.stderr
            if number == 2:
                assert "removed 1 half-made by ended processes, 0.1 MB freed" in done.stderr
        # the first copy is read by a live process: kept, though neither of the two newest
        assert sorted(p.name for p in copies.iterdir()) == sorted([*shas, running.name])
    finally:
        reader.communicate("", timeout=60)
    shas.append(_next_base(ci, shared, 4))
    git(mine, "pull", "-q", "--ff-only")
    done = codecite(mine, env, "index")
    assert "removed 2 earlier copies of the base," in done.stderr, done.stderr
    assert "MB freed" in done.stderr
    assert sorted(p.name for p in copies.iterdir()) == sorted([*shas[2:], running.name])
    # the store gone: the copy in place is still read, offline
    shutil.rmtree(shared)
    found = _paths(mine, env, "kiwi4", "zebraquartz")
    assert (found["kiwi4"][:1], found["zebraquartz"]) == (["new4.py"], ["kept.py"]), found
    assert "fetched earlier" in found.stderr
