"""``json.dumps(doc, indent=2)``, byte for byte, several times faster on a plan.

With ``indent`` the standard library falls back to its pure-Python encoder, which yields one
token at a time: on a plan of thousands of claims, each listing hundreds of instance types,
writing the output cost as much as the solve. This writer builds the same text from the
same pieces (the C string escaper, ``float.__repr__``, the same separators), joining a list
of strings in one call. Anything outside what a plan holds (a key that is not a string, an
object of another type) is handed to ``json.dumps`` itself, so the result never differs.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

_INDENT = "  "
_INFINITY = float("inf")


class _NotPlain(Exception):
    """A value this writer leaves to ``json.dumps``."""


def dumps_indented(doc: Any) -> str:
    """The text ``json.dumps(doc, indent=2)`` returns."""
    out: list[str] = []
    try:
        _write(doc, 0, out, {})
    except _NotPlain:
        return json.dumps(doc, indent=2)
    return "".join(out)


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def _write(
    value: Any, level: int, out: list[str], seen: dict[tuple[int, tuple[str, ...]], str]
) -> None:
    # The same order of tests as the standard encoder: str, None, bools, int, float, ...
    if isinstance(value, str):
        out.append(encode_basestring_ascii(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = "\n" + _INDENT * (level + 1)
        if all(type(v) is str for v in value):
            # Plans repeat long lists of names (instance types, zones) from claim to claim.
            key = (level, tuple(value))
            text = seen.get(key)
            if text is None:
                text = seen[key] = (
                    "["
                    + inner
                    + ("," + inner).join(map(encode_basestring_ascii, value))
                    + "\n"
                    + _INDENT * level
                    + "]"
                )
            out.append(text)
            return
        sep = "[" + inner
        for v in value:
            out.append(sep)
            _write(v, level + 1, out, seen)
            sep = "," + inner
        out.append("\n" + _INDENT * level + "]")
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = "\n" + _INDENT * (level + 1)
        sep = "{" + inner
        for k, v in value.items():
            if not isinstance(k, str):
                raise _NotPlain
            out.append(sep + encode_basestring_ascii(k) + ": ")
            _write(v, level + 1, out, seen)
            sep = "," + inner
        out.append("\n" + _INDENT * level + "}")
    else:
        raise _NotPlain
