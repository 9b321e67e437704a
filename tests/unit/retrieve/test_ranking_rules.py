"""Issue 20's ranking rules, each on a small real index (tree-sitter chunks in LanceDB, keyword
only so the rules alone decide): the definition of a name before the chunks that use it, with
scores that keep unequal evidence unequal."""

from __future__ import annotations

from pathlib import Path

from answer_helpers import index_files as _index

from codecite_lsp.retrieve.legacy import legacy_files
from codecite_lsp.retrieve.names import named_in, reexported
from codecite_lsp.retrieve.retriever import open_retriever

_BODY = "".join(f"    request = request.with_header({n})\n" for n in range(12))

# One file defines Dispatcher; five others say its name more often than the definition does.
_USERS = {
    f"app/handler_{n}.py": (
        f"def serve_{n}(request):\n"
        "    # the Dispatcher routes it: a Dispatcher per request, as the Dispatcher wants\n"
        "    log('Dispatcher ready; Dispatcher started')\n" + _BODY + "    return request\n\n\n"
        f"def stop_{n}(request):\n"
        "    log('Dispatcher stopped; the Dispatcher is gone')\n" + _BODY + "    return request\n"
    )
    for n in range(5)
}
_DEFINES = {
    "app/core.py": "class Dispatcher:\n"
    "    '''Routes each request to its handler.'''\n\n"
    "    def handle(self, request):\n"
    + "".join(f"        step_{n} = self.table.get(request.path, {n})\n" for n in range(30))
    + "        return step_29(request)\n"
}
_BOTH = {**_USERS, **_DEFINES}


def test_the_chunk_defining_a_looked_up_name_comes_first(tmp_path: Path) -> None:
    config = _index(tmp_path, _BOTH)
    found = open_retriever(tmp_path / "repo", config).search("Dispatcher", 8)
    assert (found[0].chunk.path, found[0].chunk.symbol) == ("app/core.py", "Dispatcher")
    # no tie at the top: a chunk that only says the name has less evidence than its definition
    uses = [r for r in found if r.chunk.path in _USERS]
    assert uses and all(r.score < found[0].score for r in uses)


def test_a_name_in_a_sentence_brings_its_definition_first(tmp_path: Path) -> None:
    config = _index(tmp_path, _BOTH)
    retriever = open_retriever(tmp_path / "repo", config)
    found = retriever.search("where does `Dispatcher` route a request", 8)
    assert (found[0].chunk.path, found[0].chunk.symbol) == ("app/core.py", "Dispatcher")
    assert all(r.score < found[0].score for r in found if r.chunk.path in _USERS)


# The current module and an old copy kept beside it, which says the words more often.
_TREES = {
    "pkg/fields.py": "class Field:\n    '''A model field: its default and its alias.'''\n\n"
    "    def __init__(self, default, alias):\n        self.default = default\n",
    "pkg/v1/fields.py": "class Field:\n"
    "    '''A model field (v1): the field default, the field alias.'''\n\n"
    "    def __init__(self, default, alias):\n"
    "        self.default = default  # the field default\n        self.alias = alias\n",
    "pkg/v1/main.py": "from pkg.v1.fields import Field\n\n\n"
    "def model(field: Field):\n    return field\n",
    "pkg/main.py": "from pkg.fields import Field\n\n\ndef model(field: Field):\n    return field\n",
}


def test_an_old_copy_of_a_module_ranks_below_the_current_one(tmp_path: Path) -> None:
    config = _index(tmp_path, _TREES)
    retriever = open_retriever(tmp_path / "repo", config)
    for query in ("Field", "model field default alias"):
        found = [r.chunk.path for r in retriever.search(query, 6)]
        assert found.index("pkg/fields.py") < found.index("pkg/v1/fields.py"), query
    # asked for by name, the old copy is not demoted
    explained = retriever.search("v1 field default alias", 6)
    assert not any("legacy" in dict(r.terms) for r in explained)
    demoted = retriever.search("model field default alias", 6)
    old = [r for r in demoted if r.chunk.path.startswith("pkg/v1/")]
    assert old and all("legacy" in dict(r.terms) for r in old)


def test_old_trees_are_found_from_the_paths_alone() -> None:
    paths = [
        "api/v1/users.py",  # a lone version folder is the current API
        "zod/v3/types.ts",  # an older version beside a newer one
        "zod/v4/types.ts",
        "pkg/fields.py",
        "pkg/v1/fields.py",  # the same path without its version folder exists
        "pkg/_vendor/six.py",
        "pkg/compat.py",  # a module named compat is current code, not a folder of copies
    ]
    assert legacy_files(paths) == {
        "zod/v3/types.ts": "v3",
        "pkg/v1/fields.py": "v1",
        "pkg/_vendor/six.py": "_vendor",
    }


# A small file named for the concept, and a 2,000-line client that repeats its words.
_CONCEPT = {
    "net/backoff.py": "def delay_for(attempt, base=0.5, cap=30.0):\n"
    "    '''The backoff before a retry: how long to wait before the next attempt.'''\n"
    + "".join(f"    step_{n} = jitter(base, {n})\n" for n in range(16))
    + "    return min(cap, base * 2**attempt)  # exponential backoff\n",
    "net/client.py": "".join(
        f"def send_{n}(request, attempt):\n"
        + (
            f"    # on a retry, wait for the backoff: the retry backoff of request {n}\n"
            if n % 20 == 0
            else "    # send it on\n"
        )
        + "    return transport.send(request, attempt)\n\n\n"
        for n in range(400)
    ),
}


def test_a_small_file_named_for_the_concept_beats_a_big_one_repeating_it(
    tmp_path: Path,
) -> None:
    config = _index(tmp_path, _CONCEPT)
    found = open_retriever(tmp_path / "repo", config).search("retry backoff", 5)
    assert found[0].chunk.path == "net/backoff.py"
    assert "file_name" in dict(found[0].terms)


# A class whose docstring says how it picks the next job, and the method that does it.
_DESCRIBED = {
    "jobs/queue.py": "class JobQueue:\n"
    '    """Picks the next job to run: the job with the earliest deadline is picked first,\n'
    "    and among jobs with the same deadline the job queued first is picked next.\n"
    "    Picking the next job never blocks; a job picked is removed from the queue.\n"
    "    The queue keeps its jobs in a heap ordered by deadline, then by arrival, so\n"
    "    that picking is cheap and the order of equal deadlines is stable.\n"
    '    """\n\n'
    "    def pop(self):\n"
    "        deadline, arrival, job = heapq.heappop(self._heap)\n"
    + "".join(f"        self._stats[{n}] = self._stats.get({n}, 0) + 1\n" for n in range(12))
    + "        return job\n",
}


def test_the_body_that_does_the_work_comes_before_its_description(tmp_path: Path) -> None:
    config = _index(tmp_path, _DESCRIBED)
    retriever = open_retriever(tmp_path / "repo", config)
    found = retriever.search("how is the next job picked by deadline", 4)
    assert [(r.chunk.start_line, r.chunk.symbol) for r in found][:1] == [(9, "JobQueue.pop")]
    described = retriever.search("what is the JobQueue for", 4)
    assert described[0].chunk.start_line == 1  # asked what it is: the description answers


def test_a_question_is_shown_the_body_before_its_description(tmp_path: Path) -> None:
    # The question's rerank reads the words the docstring says in prose: without the unit, the
    # description outranks the body that search put first.
    config = _index(tmp_path, _DESCRIBED)
    retriever = open_retriever(tmp_path / "repo", config)
    found = retriever.retrieve("how is the next job picked by deadline").candidates
    assert [(r.chunk.start_line, r.chunk.symbol) for r in found][:1] == [(9, "JobQueue.pop")]
    assert "description" in dict(found[0].terms)
    described = retriever.retrieve("what is the JobQueue for").candidates
    assert described[0].chunk.start_line == 1


def test_a_windows_copy_of_a_module_is_found_beside_its_portable_one() -> None:
    paths = [
        "src/unix/tcp.c",
        "src/win/tcp.c",  # the same module written again for Windows
        "src/win/winsock.c",  # Windows only: nothing portable to read instead
        "src/win.c",
    ]
    assert legacy_files(paths) == {"src/win/tcp.c": "win"}


def test_a_go_build_variant_is_found_beside_the_file_it_stands_in_for() -> None:
    paths = [
        "binding/binding.go",
        "binding/binding_nomsgpack.go",  # built instead of binding.go without msgpack
        "binding/msgpack.go",
        "fs.go",
        "fs_windows.go",  # GOOS in the name: built for Windows instead of fs.go
        "tree.go",
        "tree_test.go",
        "routergroup.go",
        "routergroup_helpers.go",  # a file of its own, not a build variant
        "note.go",
        "note_nothing.go",  # "no" + a word the repository names nothing after
        "term_linux.go",  # no portable term.go beside it: the only one there is
    ]
    assert legacy_files(paths) == {
        "binding/binding_nomsgpack.go": "nomsgpack",
        "fs_windows.go": "windows",
    }


# The portable TCP module, and its Windows copy that says the words more often.
_PLATFORMS = {
    "src/unix/tcp.c": "int uv_tcp_connect(uv_tcp_t* handle, const struct sockaddr* addr) {\n"
    "  /* connect the tcp socket */\n  return connect(handle->fd, addr);\n}\n",
    "src/win/tcp.c": "int uv_tcp_connect(uv_tcp_t* handle, const struct sockaddr* addr) {\n"
    "  /* connect the tcp socket: a tcp connect through the tcp connect extension */\n"
    "  return tcp_connect_ex(handle->socket, addr);  /* tcp connect */\n}\n",
}


def test_the_portable_module_ranks_before_its_windows_copy(tmp_path: Path) -> None:
    config = _index(tmp_path, _PLATFORMS)
    retriever = open_retriever(tmp_path / "repo", config)
    assert [r.chunk.path for r in retriever.search("tcp connect", 2)] == [
        "src/unix/tcp.c",
        "src/win/tcp.c",
    ]
    # asked about Windows, its copy is what is asked for
    assert retriever.search("tcp connect on windows", 2)[0].chunk.path == "src/win/tcp.c"


def test_re_exports_are_read_in_rust_ecmascript_and_python_packages() -> None:
    rust = "pub use axum_core::extract::{\n    FromRef, FromRequest,\n};\nuse other::Hidden;\n"
    assert reexported({"FromRequest", "Hidden"}, "src/extract/mod.rs", rust) == {"FromRequest"}
    ts = "export { initTRPC } from './initTRPC';\nimport { Router } from './router';\n"
    assert reexported({"initTRPC", "Router"}, "src/index.ts", ts) == {"initTRPC"}
    py = "from .fields import (\n    Field,\n)\n"
    assert reexported({"Field"}, "pkg/__init__.py", py) == {"Field"}
    assert reexported({"Field"}, "pkg/main.py", py) == set()  # a plain relative import


# A name the repository takes from a dependency: one module re-exports it, five use it.
_IMPLEMENTS = "".join(
    f"impl<S> FromRequest<S> for Thing{n} {{\n    // a FromRequest for Thing{n}\n"
    f"    fn from_request(req: Request) -> Self {{ Thing{n}::new(req) }}\n}}\n\n"
    for n in range(3)
)
_REEXPORTS = {
    "src/extract/mod.rs": "//! Types and traits for extracting data from requests.\n\n"
    "pub use axum_core::extract::{\n    FromRef, FromRequest, FromRequestParts,\n};\n\n"
    "pub mod path;\npub mod query;\n",
    **{
        f"src/handler/h{n}.rs": "use axum_core::extract::FromRequest;\n\n" + _IMPLEMENTS
        for n in range(5)
    },
}


def test_a_name_defined_elsewhere_is_looked_up_where_it_is_re_exported(tmp_path: Path) -> None:
    config = _index(tmp_path, _REEXPORTS)
    found = open_retriever(tmp_path / "repo", config).search("FromRequest", 6)
    assert found[0].chunk.path == "src/extract/mod.rs"
    assert "defines" in dict(found[0].terms)


def test_a_look_up_defined_here_is_not_outranked_by_a_file_named_for_its_words(
    tmp_path: Path,
) -> None:
    # `map_request.rs` says "request", a word of `FromRequest`, in its name; the look-up is
    # answered where the name is made this module's own.
    files = {
        **_REEXPORTS,
        "src/map_request.rs": "use axum_core::extract::FromRequest;\n\n" + _IMPLEMENTS,
    }
    config = _index(tmp_path, files)
    found = open_retriever(tmp_path / "repo", config).search("FromRequest", 6)
    assert found[0].chunk.path == "src/extract/mod.rs"
    assert not any("file_name" in dict(r.terms) for r in found)


def test_words_spelling_an_acronym_name_it_as_code_spells_it() -> None:
    named, _ = named_in("JSON object with named fields")
    assert {"JsonObject", "JSONObject", "json_object"} <= named


def test_a_module_path_is_not_a_re_exported_name() -> None:
    ts = "export { Ky } from './core/hooks.js';\nexport * from './types/options.js';\n"
    assert reexported({"hooks", "js", "options", "Ky"}, "source/index.ts", ts) == {"Ky"}
    rust = "pub use self::connect_info::ConnectInfo;\npub use crate::Json as Body;\n"
    assert reexported({"connect_info", "ConnectInfo", "Json"}, "src/lib.rs", rust) == {
        "ConnectInfo",
        "Json",
    }


def test_fields_rank_a_query_in_words_not_one_typing_identifiers(tmp_path: Path) -> None:
    config = _index(tmp_path, _CONCEPT)
    retriever = open_retriever(tmp_path / "repo", config)
    assert "fields" in dict(retriever.search("retry backoff", 3)[0].terms)
    # an identifier typed: the chunks holding it decide, not where the other words are said
    typed = retriever.search("delay_for backoff", 3)
    assert typed[0].chunk.path == "net/backoff.py"
    assert not any("fields" in dict(r.terms) for r in typed)


# A package's code says a dependency's name often; only the manifest says its version range.
_PACKAGED = {
    "setup.py": "from setuptools import setup\n\nsetup(\n    name='fetcher',\n"
    "    install_requires=['charset_normalizer>=2,<3', 'idna>=2.5,<3'],\n"
    "    python_requires='>=3.8',\n)\n",
    **{
        f"fetcher/decode_{n}.py": "import charset_normalizer\n\n\n"
        f"def decode_{n}(body):\n"
        "    # charset normalizer guesses the charset; normalizer results are ranked\n"
        "    best = charset_normalizer.from_bytes(body).best()\n"
        "    return str(best) if best else body.decode('charset normalizer fallback')\n"
        for n in range(4)
    },
    "fetcher/resolve.py": "def resolve_dependencies(graph):\n"
    "    '''Resolves nested and sub-dependencies of each dependency, depth first.'''\n"
    "    return [node for node in graph.walk() if node.dependencies]\n",
}


def test_a_question_about_a_dependency_version_finds_the_manifest(tmp_path: Path) -> None:
    retriever = open_retriever(tmp_path / "repo", _index(tmp_path, _PACKAGED))
    for query in ("Allow charset normalizer >=2 and <4", "Drop support for Python 3.8"):
        found = retriever.search(query, 5)
        assert found[0].chunk.path == "setup.py", (query, [r.chunk.path for r in found])
        assert "manifest" in dict(found[0].terms)
    # the same words about what the code does: no manifest first
    found = retriever.search("how are nested and sub-dependencies resolved", 5)
    assert found[0].chunk.path == "fetcher/resolve.py"
    assert all("manifest" not in dict(r.terms) for r in found)


# Two files named by the query's words; the query spells only one name in order.
_SPELLED = {
    "src/JsonArray.java": "public final class JsonArray extends JsonElement {\n"
    "  private final List<JsonElement> elements = new ArrayList<>();\n"
    "  /** Access by index. */\n"
    "  public JsonElement get(int index) { return elements.get(index); }\n"
    "  public void add(JsonElement element) { elements.add(element); }\n}\n",
    "src/JsonElement.java": "public abstract class JsonElement {\n"
    "  /** Whether this element is an array: an array element, accessed as an array. */\n"
    "  public boolean isJsonArray() { return this instanceof JsonArray; }\n"
    "  /** This element as an array, for access to each array element. */\n"
    "  public JsonArray getAsJsonArray() { return (JsonArray) this; }\n}\n",
}


def test_a_file_whose_name_the_query_spells_in_order_comes_first(tmp_path: Path) -> None:
    retriever = open_retriever(tmp_path / "repo", _index(tmp_path, _SPELLED))
    found = retriever.search("JSON array operations and element access", 2)
    assert [r.chunk.path for r in found] == ["src/JsonArray.java", "src/JsonElement.java"]
    # the other way round, the other file
    found = retriever.search("JSON element hierarchy and array access", 2)
    assert found[0].chunk.path == "src/JsonElement.java"
