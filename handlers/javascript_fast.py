"""A fast path for the JavaScript decoder: one plain call, read without tree-sitter.

Most JavaScript answers are one call with keyword arguments and simple values
(``f(a="x", b=[1, 2], c={k: "v"})``), and building a syntax tree costs several times more than
reading them. ``read_javascript_call`` matches the whole text against that shape with one
regular expression and answers the call (value for value what ``fcenv.handlers.javascript``
produces from the tree), the parser's certain failure, or None (the caller parses); its
docstring gives the shape and why each answer is certain. Why and how fast:
docs/benchmarks/verdicts.md#how-it-got-past-2x.
"""

from __future__ import annotations

import re
from typing import Any

from fcenv.handlers.base import Call, DecodeError

_RESERVED = (
    "await break case catch class const continue debugger default delete do else enum export extends false "
    "finally for function if implements import in instanceof interface let new null package private protected "
    "public return static super switch this throw true try typeof undefined var void while with yield async of "
    "get set as from target meta using"
).split()

_SPACE = r"[ \t\n]*+"
_NAME = rf"(?!(?:{'|'.join(sorted(_RESERVED, key=len, reverse=True))})(?![\w$]))[A-Za-z_$][\w$]*+"
_STRING = r""""[^"\\\n\r\x00-\x1f\x7f]*+"|'[^'\\\n\r\x00-\x1f\x7f]*+'"""
_SCALAR = rf"{_STRING}|-?(?:[1-9]\d*+|0)(?:\.\d++)?+(?![\w.$])|(?:true|false|null)(?![\w$])|{_NAME}(?:\.{_NAME})*+"


def _nested(inner: str) -> str:
    """Values one level deeper than ``inner``: ``inner`` itself, or arrays and objects of it."""
    array = rf"\[{_SPACE}(?:(?:{inner})(?:{_SPACE},{_SPACE}(?:{inner}))*+{_SPACE})?\]"
    entry = rf"(?:{_NAME}|{_STRING}){_SPACE}:{_SPACE}(?:{inner})"
    obj = rf"\{{{_SPACE}(?:{entry}(?:{_SPACE},{_SPACE}{entry})*+{_SPACE})?\}}"
    return rf"{_SCALAR}|{array}|{obj}"


_VALUE = _nested(_nested(_SCALAR))  # arrays and objects nested two deep
_ARGUMENT = rf"{_SPACE}{_NAME}{_SPACE}={_SPACE}(?:{_VALUE})"
_CALL = rf"({_NAME}(?:\.{_NAME})*+){_SPACE}\(((?:{_ARGUMENT}(?:{_SPACE},{_ARGUMENT})*+)?){_SPACE}\)"

_STATEMENT = re.compile(rf"{_SPACE}{_CALL}{_SPACE};?{_SPACE}", re.ASCII)
# ``f(a=1), g(b=2)`` is one sequence expression, not a call: BFCL finds no call statement.
_SEQUENCE = re.compile(rf"{_SPACE}{_CALL}(?:{_SPACE},{_SPACE}{_CALL})++{_SPACE};?{_SPACE}", re.ASCII)
# The call up to an argument whose scalar value runs into a second operand on the same line
# (a name that is not a reserved word, a number, a quoted string): certainly a syntax error.
# So is a number running into a second fraction (``1.2.3``, a version number).
_TWO_OPERANDS = re.compile(
    rf"{_SPACE}{_NAME}(?:\.{_NAME})*+{_SPACE}\((?:{_ARGUMENT}{_SPACE},)*+"
    rf"{_SPACE}{_NAME}{_SPACE}={_SPACE}(?:(?:{_SCALAR})[ \t]++(?:{_NAME}|\d|[\"'])|-?\d++\.\d++\.\d)",
    re.ASCII,
)
# One ``name=value`` at a time, over the arguments the whole-text match delimited.
_ONE_ARGUMENT = re.compile(rf"{_SPACE}({_NAME}){_SPACE}={_SPACE}({_VALUE}){_SPACE},?", re.ASCII)


def read_javascript_call(code: str) -> list[Call] | None:
    """The call in ``code`` (the text after BFCL's clean-up) if it has the shape, else None.

    The shape: ASCII only; a dotted callee without spaces; ``name=value`` arguments (no
    positional ones, no trailing comma, no repeated name); then at most a ``;``. Values: a string
    without backslashes, a decimal number (a minus glued on allowed), ``true``/``false``/``null``,
    a dotted name, or arrays and objects of those, nested up to two deep (object keys are names or
    strings). Each decodes to its source text, a string without its quotes. Reserved words (and a
    few contextual ones) never stand where a name is read (``f(a=in)`` is left to the parser),
    which keeps tree-sitter's error recovery out of it: every text in the shape is one complete,
    error-free call statement (automatic semicolon insertion ends it).

    Raises ``DecodeError`` for calls joined by commas (``decoder_wrong_output_format``: one
    sequence expression, in which BFCL finds no call) and for two operands in a row
    (``decoder_failed``), the commonest broken text: an unquoted string of words (``f(a=1,
    b=Hello World)``) or a version number (``1.2.3``, two numbers in a row), which no JavaScript
    contains. Error recovery skips the second operand into an ERROR node, whatever follows
    (tree-sitter repairs a text without one only by inventing a token after which the next one
    completes a construct, and no token lets an operand complete one), and BFCL rejects any ERROR
    node. Error recovery is what makes tree-sitter slow: such a text costs 40-60 µs to parse, ten
    times a correct one."""
    if not code.isascii():
        return None  # keep to the texts whose characters are bytes
    match = _STATEMENT.fullmatch(code)
    if match is None:
        if _SEQUENCE.fullmatch(code):
            raise DecodeError("no call statement in the text", kind="decoder_wrong_output_format")
        if _TWO_OPERANDS.match(code):
            raise DecodeError("Error js parsing the source code.")  # the parser's failure
        return None
    callee, listed = match.groups()
    arguments: dict[Any, str] = {}
    for name, value in _ONE_ARGUMENT.findall(listed):
        if name in arguments:
            return None  # a repeated name fails; the full decoder says so
        # A string loses its quotes; every other value is its source text.
        arguments[name] = value[1:-1] if value[0] in "\"'" else value
    return [Call(callee, arguments)]
