"""Names a language gives every file (``self``, ``this``, keywords, builtins): hovering one says
nothing about the repository, and its "uses" would be every line of it."""

from __future__ import annotations

import builtins
import keyword

from .languages import language_for_path


def _words(*texts: str) -> frozenset[str]:
    return frozenset(" ".join(texts).split())


_C_FAMILY = "if else for while do switch case default break continue return goto sizeof"
_JS = (
    "this super new delete typeof instanceof void in of var let const function class extends "
    "return if else for while do switch case default break continue throw try catch finally "
    "async await yield import export from null undefined true false console window document "
    "globalThis Object Array String Number Boolean Promise JSON Math Error Map Set Symbol "
    "require module exports"
)
_TS = _JS + " interface type enum implements keyof readonly any unknown never"

_BY_LANGUAGE: dict[str, frozenset[str]] = {
    "python": frozenset([*keyword.kwlist, *keyword.softkwlist, *dir(builtins), "self", "cls"]),
    "javascript": _words(_JS),
    "typescript": _words(_TS),
    "tsx": _words(_TS),
    "go": _words(
        "func var const type struct interface map chan go defer select package import range "
        "return if else for switch case default break continue fallthrough goto nil true "
        "false iota append cap close complex copy delete imag len make new panic print "
        "println real recover error string int int8 int16 int32 int64 uint uint8 uint16 "
        "uint32 uint64 uintptr byte rune bool float32 float64 any"
    ),
    "rust": _words(
        "self Self super crate fn let mut const static struct enum trait impl mod use pub "
        "match if else loop while for in return break continue move ref where as dyn async "
        "await unsafe true false Some None Ok Err Option Result Vec String Box println "
        "format vec panic assert assert_eq"
    ),
    "java": _words(
        _C_FAMILY,
        "this super new class interface enum extends implements public private "
        "protected static final abstract void null true false throw throws try catch "
        "finally import package instanceof String Object System Integer List Map",
    ),
    "csharp": _words(
        _C_FAMILY,
        "this base new class interface struct enum public private protected internal "
        "static readonly void null true false var throw try catch finally using "
        "namespace string object int bool Console",
    ),
    "c": _words(_C_FAMILY, "struct union enum typedef static const void NULL"),
    "cpp": _words(_C_FAMILY, "this new delete class struct namespace template nullptr std"),
    "ruby": _words(
        "self def end class module if else elsif unless while do return nil true false puts require"
    ),
    "php": _words("this self parent function class new echo return null true false"),
    "kotlin": _words("this super fun val var class object return null true false"),
    "swift": _words("self Self super func var let class struct return nil true false"),
    "scala": _words("this super def val var class object return null true false"),
    "lua": _words("self local function end return nil true false require print"),
}


def reserved(name: str, path: str) -> bool:
    """Whether ``name`` (its last component) is given by the language of ``path`` itself."""
    language = language_for_path(path)
    last = name.rsplit(".", 1)[-1]
    return language is not None and last in _BY_LANGUAGE.get(language, frozenset())
