"""JavaScript argument strings to Python values, the way BFCL's JS type converter reads them.

BFCL's JavaScript decoder hands the checker every argument as source text (``"[1, 2]"``,
``"{k: 'v'}"``, ``"10n"``). This module reproduces BFCL's conversion, quirks included:

- ``String`` strips one pair of matching ``"`` or ``'``; other text stays as is.
- ``integer`` wants ``-?\\d+``; ``float`` wants ``-?\\d+(\\.\\d+)?`` (so integers pass as floats);
  ``Bigint`` wants the ``n`` suffix; ``Boolean`` wants ``true``/``false``; ``any`` keeps the text.
- ``array``: a 2-D literal ``[[..], [..]]`` gives lists of untyped values; otherwise the text up
  to the first ``]`` (or ``new Array(..)``) is split on every comma and each element converted
  with the element type. Any failure inside returns the (stripped) text.
- ``dict``: the text up to the first ``}`` is split into ``key: value`` pairs on commas; a piece
  without a colon belongs to the previous value. Keys and scalar values lose their quotes;
  values starting with ``[`` or ``{`` are parsed again as collections.
- Unknown types raise ``ValueError``, as in BFCL. Text that does not fit comes back unchanged,
  so the later type check fails.

The searches use ``fcenv.checkers._scan`` so hostile text costs linear time.
"""

from __future__ import annotations

import re
from typing import Any

from fcenv.checkers._scan import Finder, match_text, skip_space

_INTEGER = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+(\.\d+)?$")
_BIGINT = re.compile(r"^-?\d+n$")
_NEW_ARRAY = re.compile(r"new\s+Array\(")
_PAIR = re.compile(r"([^:]+):(.*)")  # the first colon after a non-colon run
_ROW = re.compile(r"\[(.*?)\]")  # lazy, one line: linear (each "[" scans to the next "]")


def js_to_value(value: str, js_type: str, nested_type: str | None = None) -> Any:
    """BFCL's ``js_type_converter``: the value for ``js_type``, or ``value`` unchanged."""
    if js_type == "String":
        if (value.startswith('"') and value.endswith('"')) or (value.startswith("'") and value.endswith("'")):
            return value[1:-1]
        return value
    if js_type == "integer":
        return int(value) if match_text(_INTEGER, value) else value
    if js_type == "float":
        return float(value) if match_text(_FLOAT, value) else value
    if js_type == "Bigint":
        return int(value[:-1]) if match_text(_BIGINT, value) else value  # "10n\n" raises, as in BFCL
    if js_type == "Boolean":
        return value == "true" if value in ("true", "false") else value
    if js_type in ("dict", "array"):
        return parse_js_collection(value, js_type, nested_type)
    if js_type == "any":
        return value
    raise ValueError(f"Unsupported type: {js_type}")


def parse_js_value(text: str) -> Any:
    """An untyped element: boolean, quoted string, int, float, or the text."""
    if text == "true":
        return True
    if text == "false":
        return False
    if (text.startswith('"') and text.endswith('"')) or (text.startswith("'") and text.endswith("'")):
        return text[1:-1]
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            pass
    return text


def parse_js_collection(code: str, js_type: str, nested_type: str | None = None) -> Any:
    code = code.strip()
    try:
        if js_type == "array":
            return _parse_array(code, nested_type)
        if js_type == "dict":
            return _parse_dict(code)
    except Exception:  # BFCL returns the text on any failure inside a collection
        return code
    return code


def _convert_element(text: str, nested_type: str | None) -> Any:
    return js_to_value(text, nested_type) if nested_type else parse_js_value(text)


def _parse_array(code: str, nested_type: str | None) -> Any:
    m = _NEW_ARRAY.match(code)
    if m:
        end = Finder(code).lazy_end(m.end(), ")")
        if end == -1:
            return code
        content = code[m.end():end]
        rows = _rows("[" + content + "]")  # new Array([..], [..]) is read as a 2-D literal
        if rows is not None:
            return rows
        if not content.strip():
            return []
        return [_convert_element(part.strip(), nested_type) for part in content.split(",")]
    rows = _rows(code)
    if rows is not None:
        return rows
    if not code.startswith("["):
        return code
    end = Finder(code).lazy_end(1, "]")
    if end == -1:
        return code
    content = code[1:end]
    if not content.strip():
        return []
    return [_convert_element(part.strip(), nested_type) for part in content.split(",")]


def _rows(code: str) -> list | None:
    extent = _two_dimensional_end(code)
    if extent is None:
        return None
    rows = _ROW.findall(code[1:extent - 1])
    return [[parse_js_value(x.strip()) for x in row.split(",")] for row in rows]


def _two_dimensional_end(code: str) -> int | None:
    """End of BFCL's 2-D match ``\\[\\s*\\[.*?\\]\\s*(,\\s*\\[.*?\\]\\s*)*\\]`` at the start, or None.

    The regex backtracks exponentially; this computes the same first match right to left.
    For each ``]`` at q, ``after[q]`` is where the match ends if a row closes at q (None if
    it cannot). A row opened at r closes at the first ``]`` after r, before the next newline,
    whose ``after`` succeeds: the lazy ``.*?`` tries closing brackets in order.
    """
    if not code.startswith("["):
        return None
    first = skip_space(code, 1)
    if not code.startswith("[", first):
        return None
    closes = [i for i, ch in enumerate(code) if ch == "]"]
    good: list[int] = []  # closing brackets whose "after" succeeds, in decreasing order
    after: dict[int, int] = {}
    newline_after = _next_newline_table(code)

    def row_end(r: int) -> int | None:
        # First good close q with r < q <= line end; good is decreasing, so search from its end.
        limit = newline_after[r]
        lo, hi = 0, len(good)
        while lo < hi:  # find the last index whose value is > r (values decrease)
            mid = (lo + hi) // 2
            if good[mid] > r:
                lo = mid + 1
            else:
                hi = mid
        if lo == 0:
            return None
        q = good[lo - 1]
        return after[q] if q < limit else None

    for q in reversed(closes):
        s = skip_space(code, q + 1)
        end = None
        if code.startswith(",", s):
            r = skip_space(code, s + 1)
            if code.startswith("[", r):
                end = row_end(r)
        elif code.startswith("]", s):
            end = s + 1
        if end is not None:
            after[q] = end
            good.append(q)
    return row_end(first)


def _next_newline_table(code: str) -> list[int]:
    """For each index, the index of the next newline (len(code) when none)."""
    table = [len(code)] * (len(code) + 1)
    nxt = len(code)
    for i in range(len(code) - 1, -1, -1):
        if code[i] == "\n":
            nxt = i
        table[i] = nxt
    return table


def _parse_dict(code: str) -> Any:
    if not code.startswith("{"):
        return code
    end = Finder(code).lazy_end(1, "}")
    if end == -1:
        return code
    content = code[1:end]
    if not content.strip():
        return {}
    # A piece starts a new pair only when both it and the pair so far hold a colon.
    pairs: list[str] = []
    for piece in content.split(","):
        if pairs and ":" in pairs[-1] and ":" in piece:
            pairs.append(piece)
        elif pairs:
            pairs[-1] += "," + piece
        else:
            pairs.append(piece)
    result = {}
    for pair in pairs:
        m = _PAIR.search(pair)
        if m is None:
            continue
        key = m.group(1).strip().strip("'\"")
        value = m.group(2).strip().strip("'\"").strip()
        if value.startswith("[") and value.endswith("]"):
            result[key] = parse_js_collection(value, "array")
        elif value.startswith("{") and value.endswith("}"):
            result[key] = parse_js_collection(value, "dict")
        else:
            result[key] = parse_js_value(value)
    return result
