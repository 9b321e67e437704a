"""No module of codecite_lsp uses another's private names: no ``from x import _name`` (nor a
private module), and no ``obj._attr`` on anything but ``self``, ``cls`` or ``super()``. What a
module shares is public, with a docstring; the few library internals we must touch are listed
below, each with its reason. The checker is shown to catch each kind of violation."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Underscored names that are public APIs (the underscore only keeps them off field names).
PUBLIC = {
    "_asdict": "namedtuple's documented method (pygls hands params over as namedtuples)",
    "_exit": "os._exit, documented: leave without the interpreter's teardown",
}
# (file, expression): a library internal used in one place only.
ALLOWED = {
    ("codecite_lsp/lsp/protocol.py", "server._stop_event"): (
        "serve_stdio replaces pygls' start_io, which sets this event that shutdown() sets"
    ),
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _own(node: ast.expr) -> bool:
    """``self``, ``cls`` or ``super()``: the object's own attributes."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def _reach_in(rel: str, node: ast.AST) -> str | None:
    """What ``node`` takes that is private to another module or object, if anything."""
    if isinstance(node, ast.Attribute) and _private(node.attr) and not _own(node.value):
        text = ast.unparse(node)
        return None if node.attr in PUBLIC or (rel, text) in ALLOWED else text
    if isinstance(node, ast.ImportFrom):
        names = [node.module or "", *(alias.name for alias in node.names)]
    elif isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        return None
    private = [n for n in names if any(map(_private, n.split(".")))]
    return f"import of {', '.join(private)}" if private else None


def violations(package: Path) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
            taken = _reach_in(rel, node)
            if taken is not None:
                found.append(f"{rel}:{getattr(node, 'lineno', 0)}: {taken}")
    return found


def test_no_module_uses_private_names_of_another() -> None:
    assert violations(ROOT / "codecite_lsp") == []


def test_every_allowed_internal_is_still_used() -> None:
    for rel, text in ALLOWED:
        assert text in (ROOT / rel).read_text(encoding="utf-8"), (rel, text)


def test_the_checker_catches_each_kind_of_reach_in(tmp_path: Path) -> None:
    package = tmp_path / "codecite_lsp"
    shutil.copytree(
        ROOT / "codecite_lsp", package, ignore=shutil.ignore_patterns("__pycache__", "models")
    )
    indexer = package / "index" / "indexer.py"
    indexer.write_text(
        indexer.read_text(encoding="utf-8")
        + "\nfrom .tables import _OPEN_ATTEMPTS  # planted\n"
        + "import lancedb._lancedb  # planted\n"
        + "def planted(store: Store) -> object:\n"
        + "    return store._db, self._mine, super()._base, self_like._x  # planted\n",
        encoding="utf-8",
    )
    found = violations(package)
    assert [v.split(": ", 1)[1] for v in found] == [
        "import of _OPEN_ATTEMPTS",
        "import of lancedb._lancedb",
        "store._db",
        "self_like._x",
    ], found
    assert all(v.startswith("codecite_lsp/index/indexer.py:") for v in found)
