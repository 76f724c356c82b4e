"""A fast path for the JavaScript decoder: one plain call, read without tree-sitter.

Most JavaScript answers are one call with keyword arguments and simple values:
``f(a="x", b=[1, 2], c={k: "v"})``. Building and walking a syntax tree for them costs
several times more than reading them, so ``read_javascript_call`` matches the whole text
against that shape with one regular expression and answers either the call, value for value
what ``handlers.javascript`` produces from the tree, or None (anything else: the caller
parses).

The shape: ASCII only; a dotted callee without spaces; ``name=value`` arguments (no
positional ones, no trailing comma, no repeated name); then at most a ``;``. Values: a string
without backslashes, a decimal number (a minus glued on allowed), ``true``/``false``/
``null``, a dotted name, or an array or object one level deep holding those (object keys are
names or strings). Each decodes to its source text, a string without its quotes.

Reserved words (and a few contextual ones) never stand where a name is read (``f(a=in)`` is
left to the parser), which keeps tree-sitter's error recovery out of it: every text in the
shape is one complete, error-free call statement (automatic semicolon insertion ends it).
"""

from __future__ import annotations

import re
from typing import Any

from handlers.base import Call

_JAVASCRIPT_RESERVED = (
    "await break case catch class const continue debugger default delete do else enum export extends false "
    "finally for function if implements import in instanceof interface let new null package private protected "
    "public return static super switch this throw true try typeof undefined var void while with yield async of "
    "get set as from target meta using"
).split()

_SPACE = r"[ \t\n]*+"


def _name(reserved: list[str]) -> str:
    words = "|".join(sorted(reserved, key=len, reverse=True))
    return rf"(?!(?:{words})(?![\w$]))[A-Za-z_$][\w$]*+"


def _call_pattern(callee_value: str, argument_value: str, end: str) -> re.Pattern[str]:
    argument = rf"{_SPACE}{callee_value}{_SPACE}={_SPACE}(?:{argument_value})"
    return re.compile(
        rf"{_SPACE}({callee_value}(?:\.{callee_value})*+){_SPACE}\(((?:{argument}(?:{_SPACE},{argument})*+)?){_SPACE}\)"
        rf"{_SPACE}{end}{_SPACE}",
        re.ASCII,
    )


def _argument_pattern(name: str, value: str) -> re.Pattern[str]:
    """One ``name=value`` at a time, over the arguments the whole-text match delimited."""
    return re.compile(rf"{_SPACE}({name}){_SPACE}={_SPACE}({value}){_SPACE},?", re.ASCII)


_JS_NAME = _name(_JAVASCRIPT_RESERVED)
_JS_STRING = r""""[^"\\\n\r\x00-\x1f\x7f]*+"|'[^'\\\n\r\x00-\x1f\x7f]*+'"""
_JS_SCALAR = (
    rf"{_JS_STRING}|-?(?:[1-9]\d*+|0)(?:\.\d++)?+(?![\w.$])|(?:true|false|null)(?![\w$])"
    rf"|{_JS_NAME}(?:\.{_JS_NAME})*+"
)
_JS_ARRAY = rf"\[{_SPACE}(?:(?:{_JS_SCALAR})(?:{_SPACE},{_SPACE}(?:{_JS_SCALAR}))*+{_SPACE})?\]"
_JS_ENTRY = rf"(?:{_JS_NAME}|{_JS_STRING}){_SPACE}:{_SPACE}(?:{_JS_SCALAR})"
_JS_OBJECT = rf"\{{{_SPACE}(?:{_JS_ENTRY}(?:{_SPACE},{_SPACE}{_JS_ENTRY})*+{_SPACE})?\}}"
_JS_VALUE = rf"{_JS_SCALAR}|{_JS_ARRAY}|{_JS_OBJECT}"
_JS_CALL = _call_pattern(_JS_NAME, _JS_VALUE, ";?")
_JS_ARGUMENT = _argument_pattern(_JS_NAME, _JS_VALUE)


def read_javascript_call(code: str) -> list[Call] | None:
    """The call in ``code`` (the text after BFCL's clean-up) if it has the shape, else None."""
    return _read(code, _JS_CALL, _JS_ARGUMENT)


def _read(code: str, call: re.Pattern[str], argument: re.Pattern[str]) -> list[Call] | None:
    if not code.isascii():
        return None  # BFCL cuts texts with byte offsets; leave that to the full decoder
    match = call.fullmatch(code)
    if match is None:
        return None
    callee, listed = match.groups()
    arguments: dict[Any, str] = {}
    for name, value in argument.findall(listed):
        if name in arguments:
            return None  # a repeated name fails; the full decoder says so
        # A string loses its quotes; every other value is its source text.
        arguments[name] = value[1:-1] if value[0] in "\"'" else value
    return [Call(callee, arguments)]
