"""Java argument strings to Python values, the way BFCL's Java type converter reads them.

BFCL's Java decoder hands the checker every argument as source text (``"42L"``,
``"new int[]{1,2}"``); the checker converts it by the parameter's Java type before its type
and value checks. This module reproduces that conversion, quirks included, because verdicts
depend on them:

- A string that does not fit the type comes back unchanged, so the type check later fails.
- ``long`` needs the ``L`` suffix and ``float`` the ``f`` suffix; ``double`` takes neither.
- The ``char`` rule never matches (BFCL's pattern is ``^'.$'``), so a char stays a raw string.
- ``Array`` elements go through the converter with the element type, so ``String`` elements
  keep their double quotes; ``ArrayList`` elements of type String/char lose their first and
  last characters instead. Elements are split on every comma, quoted or not.
- ``HashMap`` reads ``put("k", v);`` pairs of a double-brace initialiser.
- ``Set``, ``Hashtable``, ``Queue`` and ``Stack`` raise ``NotImplementedError`` (Hashtable with
  BFCL's "Set" message) and unknown types raise ``ValueError``, as BFCL does.
- Patterns follow Python ``re`` semantics, ``$`` before a final newline and Unicode digits
  included; numbers are parsed with ``int``/``float`` exactly as BFCL does.

The searches are written with ``fcenv.checkers._scan`` instead of BFCL's lazy regexes so that
hostile text costs linear time.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from fcenv.checkers._scan import Finder, match_text, skip_space

# Scalar patterns: simple enough for re to run in linear time.
_INTEGER = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_DOUBLE = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_LONG = re.compile(r"^-?\d+[lL]$")
_FLOAT_SUFFIX = re.compile(r"[fF]$")
_LONG_SUFFIX = re.compile(r"[lL]$")

_ARRAYLIST = re.compile(r"new\s+ArrayList<\w*>")
_ARRAY = re.compile(r"new\s+\w+\[\]\s*\{")
_HASHMAP = re.compile(r"new\s+HashMap<")
_CONSTRUCTOR_THEN_BRACE = re.compile(r">\(\)\s*\{")
_AS_LIST = "(Arrays.asList("

NOT_IMPLEMENTED = {"Set": "Set", "Hashtable": "Set", "Queue": "Queue", "Stack": "Stack"}


def java_to_value(value: str, java_type: str, nested_type: str | None = None) -> Any:
    """BFCL's ``java_type_converter``: the value for ``java_type``, or ``value`` unchanged."""
    if java_type in ("byte", "short", "integer"):
        return int(value) if match_text(_INTEGER, value) else value
    if java_type == "float":
        return float(_FLOAT_SUFFIX.sub("", value)) if match_text(_FLOAT, value) else value
    if java_type == "double":
        return float(value) if match_text(_DOUBLE, value) else value
    if java_type == "long":
        return int(_LONG_SUFFIX.sub("", value)) if match_text(_LONG, value) else value
    if java_type == "boolean":
        return value == "true" if value in ("true", "false") else value
    if java_type == "char":
        return value  # BFCL's char pattern can never match
    if java_type == "ArrayList":
        return parse_arraylist(value, nested_type)
    if java_type == "Array":
        return parse_array(value, nested_type)
    if java_type == "HashMap":
        return parse_hashmap(value)
    if java_type in NOT_IMPLEMENTED:
        raise NotImplementedError(f"{NOT_IMPLEMENTED[java_type]} conversion is not implemented")
    if java_type in ("String", "any"):
        return str(value)
    raise ValueError(f"Unsupported type: {java_type}")


def parse_java_value(text: str) -> Any:
    """An element with no declared type: boolean, quoted string, long, float, int, or the text."""
    if text == "true":
        return True
    if text == "false":
        return False
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if _LONG.match(text):
        return int(text[:-1])  # BFCL strips one character: "12L\n" raises, as there
    if _FLOAT.match(text):
        return float(_FLOAT_SUFFIX.sub("", text))
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            pass
    return text


def parse_arraylist(text: str, nested_type: str | None = None) -> Any:
    """``new ArrayList<T>(Arrays.asList(a, b))``, the double-brace ``add(..)`` form, or empty."""
    finder = Finder(text)
    found = _find_as_list(text, finder)
    if found is not None:
        return [_element(part.strip(), nested_type) for part in found.split(",")]
    block = _find_add_block(text, finder)
    if block is not None:
        return [_element(item.strip(), nested_type) for item in _find_calls(block, "add(", key=False)]
    if any(text.startswith("()", m.end()) for m in finder.starts(_ARRAYLIST)):
        return []
    return text


def _element(text: str, nested_type: str | None) -> Any:
    if nested_type in ("String", "char"):
        return text[1:-1]  # BFCL drops the first and last characters, quotes or not
    if nested_type:
        return java_to_value(text, nested_type)
    return parse_java_value(text)


def _find_as_list(text: str, finder: Finder) -> str | None:
    for m in finder.starts(_ARRAYLIST):
        start = m.end()
        if not text.startswith(_AS_LIST, start):
            continue
        start += len(_AS_LIST)
        end = finder.lazy_end(start, "))", min_len=1)
        if end != -1:
            return text[start:end]
    return None


def _find_add_block(text: str, finder: Finder) -> str | None:
    """The body of ``new ArrayList<T>() {{ ... }}`` (the body may span lines)."""
    for m in finder.starts(_ARRAYLIST):
        if not text.startswith("()", m.end()):
            continue
        i = skip_space(text, m.end() + 2)
        if not text.startswith("{{", i):
            continue
        end = finder.lazy_end(i + 2, "}}", dotall=True)
        if end != -1:
            return text[i + 2:end]
    return None


def _find_empty_hashmap(text: str, finder: Finder) -> int | None:
    """End index of the first ``new HashMap<.*?>()`` (lazy, across lines)."""
    for m in finder.starts(_HASHMAP):
        close = finder.lazy_end(m.end(), ">()", dotall=True)
        if close != -1:
            return close + 3
    return None


def _find_calls(text: str, opener: str, key: bool) -> list:
    """All non-overlapping ``add(<x>)`` (or ``put("<k>",\\s*<v>)`` when ``key``), as re.findall."""
    finder = Finder(text)
    found = []
    pos = 0
    while True:
        start = finder.find(opener, pos)
        if start == -1:
            return found
        i = start + len(opener)
        if key:
            key_end = finder.lazy_end(i, '",')
            if key_end == -1:
                pos = start + 1
                continue
            j = skip_space(text, key_end + 2)
            end = finder.lazy_end(j, ")")
            if end == -1:
                pos = start + 1
                continue
            found.append((text[i:key_end], text[j:end]))
        else:
            end = finder.lazy_end(i, ")", min_len=1)
            if end == -1:
                pos = start + 1
                continue
            found.append(text[i:end])
        pos = end + 1


def parse_array(text: str, nested_type: str | None = None) -> Any:
    """``new T[]{a, b}``; elements converted with the element type (String keeps its quotes)."""
    finder = Finder(text)
    for m in finder.starts(_ARRAY):
        end = finder.lazy_end(m.end(), "}")
        if end != -1:
            content = text[m.end():end]
            if not content.strip():
                return []
            parts = [part.strip() for part in content.split(",") if part.strip()]
            if nested_type:
                return [java_to_value(part, nested_type) for part in parts]
            return [parse_java_value(part) for part in parts]
    return text


def parse_hashmap(text: str) -> Any:
    """``new HashMap<..>() {{ put("k", v); ... }}`` -> dict; an empty constructor -> {}.

    BFCL's pattern is ``new\\s+HashMap<.*?>\\(\\)\\s*\\{([^}]*)\\}``: the lazy generic part may run
    past an earlier ``>()`` to reach one that a ``{`` follows, and the body
    ends at the first ``}``, so a value holding ``}`` cuts the map short. Both may span lines.
    """
    finder = Finder(text)
    body = _find_put_body(text, finder)
    if body is not None:
        return {k: parse_java_value(v.strip()) for k, v in _find_calls(body, 'put("', key=True)}
    if _find_empty_hashmap(text, finder) is not None:
        return {}
    return text


def _find_put_body(text: str, finder: Finder) -> str | None:
    positions = [m.end() for m in _CONSTRUCTOR_THEN_BRACE.finditer(text)]  # index after the "{"
    for m in finder.starts(_HASHMAP):
        k = bisect.bisect_left(positions, m.end() + 3)
        if k == len(positions):
            return None
        open_at = positions[k]
        close = finder.find("}", open_at)
        if close == -1:
            return None
        return text[open_at:close]
    return None
