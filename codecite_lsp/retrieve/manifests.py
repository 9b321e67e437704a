"""Questions about how the project is packaged are answered by its manifest files (pure).

"Allow charset normalizer >=2 and <3", "Drop support for Python 3.9", "Migrate build system to
PEP 517": the place is `setup.py` or `pyproject.toml`, which say few of the query's words (one
`install_requires` line) while the code that imports the package says them often. A query is
read as one about packaging only on strong evidence: a version constraint (`>=2`, `<3`, `3.x`,
`~=1.4`), a language version (`Python 3.9`, `Node 18`, "which Python versions"), a packaging
word (classifier, pyproject, sdist, build system, PEP 517), or the project's dependencies as
what is changed, declared or installed ("limit dependencies", "dependencies it needs").
"How are sub-dependencies resolved?" in FastAPI is about its code, and stays so.
"""

from __future__ import annotations

import re

from ..core.terms import IDENTIFIER

# The project manifests of the ecosystems the chunker knows, at the repository's root.
MANIFESTS = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "package.json",
    "go.mod",
    "Cargo.toml",
    "Gemfile",
    "build.gradle",
    "build.gradle.kts",
    "pom.xml",
    "composer.json",
    "mix.exs",
)

# Written against the number (`>=2`), as requirement specifiers are: `if x >= 0` is code.
_CONSTRAINT = re.compile(r"(?<![\w<>=~^])(?:[<>]=?|~=|==|\^)v?\d|(?<![\w.])\d+\.x\b", re.I)
_LANGUAGES = r"(?:python|py|node|nodejs|go|golang|ruby|java|jdk|rust|php|elixir)"
_NAMED = r"(?:python|nodejs|node\.js|golang|ruby|java|jdk|rust|php|elixir)"  # never a verb
_LANGUAGE_VERSION = re.compile(
    rf"\b{_LANGUAGES}\s*v?\d+(?:\.\d+)?\b|\b{_NAMED}\s+versions?\b"
    rf"|\bversions?\s+of\s+{_NAMED}\b",
    re.IGNORECASE,
)
_PEP = re.compile(r"\bpep\s*(?:517|518|621|660)\b", re.IGNORECASE)
_PACKAGING_WORDS = frozenset(
    {"classifier", "classifiers", "pyproject", "setuptools", "sdist", "packaging"}
)
_DEPENDENCIES = frozenset({"dependencies", "deps", "devdependencies", "peerdependencies"})
# What is done to dependencies (changed, declared, installed): said with one of these, the
# word means the project's packages; without ("sub-dependencies resolved") it may be code's.
_DONE_TO = frozenset(
    {"limit", "pin", "bump", "upgrade", "update", "relax", "loosen", "allow", "drop", "require"}
    | {"requires", "required", "need", "needs", "install", "installed", "declare", "declared"}
)


def asks_packaging(query: str) -> bool:
    """Whether ``query`` is about the project's packaging (dependencies, supported versions,
    build system) rather than about what its code does."""
    if _CONSTRAINT.search(query) or _LANGUAGE_VERSION.search(query) or _PEP.search(query):
        return True
    words = {word.lower() for word in IDENTIFIER.findall(query)}
    if words & _PACKAGING_WORDS or "build system" in " ".join(query.lower().split()):
        return True
    injected = any(word.startswith("inject") for word in words)  # dependency injection is code
    return bool(words & _DEPENDENCIES) and bool(words & _DONE_TO) and not injected
