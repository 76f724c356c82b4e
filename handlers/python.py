"""BFCL's prompting decoder for Python calls: ``[f(a=1), mod.g(b='x')]``.

``decode`` behaves like ``default_decode_ast_prompting(text, ReturnFormat.PYTHON)`` of bfcl-eval
2026.3.23, value for value, without ever executing the text: ``decode_syntax_tree`` and
``to_value`` give BFCL's rules, ``fcenv.handlers.python_fast`` reads plain answers without a
syntax tree. Every failure is a ``DecodeError`` of kind ``decoder_failed`` (a success is always
a list of one-key dicts, so BFCL's ``decoder_wrong_output_format`` never arises). Texts too large
to parse quickly are refused (``parse_expression``). Decoders:
docs/environment.md#decoders-checkers-and-facets; parity with BFCL: docs/parity.md.
"""

from __future__ import annotations

import ast
import warnings
from typing import Any

from fcenv.handlers import register_handler
from fcenv.handlers.base import Call, DecodeError
from fcenv.handlers.bfcl_text import bracketed
from fcenv.handlers.bounded_eval import evaluate
from fcenv.handlers.python_fast import read_calls

# Building a syntax tree costs a few microseconds per node, so the number of nodes a text
# can produce is bounded before parsing, by counting the characters that create them.
MAX_PLAIN_CHARS = 50_000
MAX_SYNTAX_MARKS = 50_000
_SYNTAX_MARKS = ",([{=:.+-*/%&|^<>~@"


@register_handler("python")
def decode(text: str) -> list[Call]:
    """Decode BFCL's Python prompting format into calls (DecodeError on failure)."""
    # BFCL also strips whitespace and single quotes after adding the brackets; the text
    # then starts with "[" and ends with "]", so that never changes anything (and is skipped).
    source = bracketed(text)
    if source == "[]":
        return []  # an empty answer (also "" and an empty fence): a common abstention, nothing to read
    if len(source) <= MAX_PLAIN_CHARS:
        calls = read_calls(source)  # most texts: no syntax tree needed (or certainly none)
        if calls is not None:
            return calls
    return decode_syntax_tree(source)


def decode_syntax_tree(source: str) -> list[Call]:
    """The general path: BFCL's decoding, from Python's syntax tree of ``source``.

    ``source`` (backticks, newlines and spaces stripped at both ends, ``[`` / ``]`` added where
    missing) is one Python expression: one call, or a list/tuple whose elements are all calls.
    A call's name is its dotted attribute chain (``a.b.f``; parts that are not names or
    attributes are left out, so ``x[0](a=1)`` is called ``""``); only keyword arguments are kept
    (positional ones are dropped silently; ``**k`` is kept under the key None), their values
    read by ``to_value``.
    """
    body = parse_expression(source)
    if isinstance(body, ast.Call):
        nodes = [body]
    # BFCL reads the elements of any display; a set only reaches here from inside a
    # <TOOLCALL> tag (handlers.bfcl_formats), the bracketed text is never one.
    elif isinstance(body, (ast.List, ast.Tuple, ast.Set)) and all(isinstance(e, ast.Call) for e in body.elts):
        nodes = list(body.elts)
    else:
        raise DecodeError("the text is not a call or a list of calls")
    try:
        return [Call(call_name(node), call_arguments(node)) for node in nodes]
    except DecodeError:
        raise
    except (RecursionError, MemoryError) as exc:
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None


def parse_expression(source: str) -> ast.expr:
    """``source`` as one Python expression. Texts longer than ``MAX_PLAIN_CHARS`` with more than
    ``MAX_SYNTAX_MARKS`` brackets, separators and operators are refused first: Python needs
    seconds to build the syntax tree of, say, 300,000 calls (BFCL would wait and decode them)."""
    if len(source) > MAX_PLAIN_CHARS and sum(map(source.count, _SYNTAX_MARKS)) > MAX_SYNTAX_MARKS:
        raise DecodeError("text too large to parse")
    try:
        with warnings.catch_warnings():
            # Invalid escapes ("\d") and numbers run into keywords ("1if") warn while
            # parsing; the reference ignores that, and a warnings-as-errors setting must not
            # turn it into a failure (nor should model text print to stderr).
            warnings.simplefilter("ignore")
            return ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError) as exc:
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None


def call_name(node: ast.Call) -> str:
    parts: list[str] = []
    func = node.func
    # Attribute chains can be thousands long without brackets, so walk them in a loop.
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def call_arguments(node: ast.Call) -> dict[Any, Any]:
    # Later duplicates overwrite earlier ones; ``**k`` has no name and lands under None.
    return {keyword.arg: to_value(keyword.value) for keyword in node.keywords}


def to_value(node: ast.expr) -> Any:
    """BFCL's mapping from an argument's syntax tree to its decoded value.

    Constants as they are (``...`` becomes ``"..."``); a unary operator on a constant negates it,
    whatever the operator (BFCL's quirk: ``+1`` and ``~1`` give -1, ``not True`` gives -1); lists,
    dicts and tuples recursively (tuples stay tuples); names as their identifier; a call without
    keyword arguments as its source text (``ast.unparse``), one with them as a nested
    ``{name: {...}}``; a subscript as the source texts of its two parts (``x[(1, 2)]``); an
    operator expression (``3 + 4``) as its value, computed by ``fcenv.handlers.bounded_eval``
    where BFCL calls ``eval``; anything else fails.
    """
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.operand, ast.Constant):
            raise DecodeError(f"unary operator on {type(node.operand).__name__}")
        try:
            return -node.operand.value
        except TypeError as exc:
            raise DecodeError(f"TypeError: {exc}") from None
    if isinstance(node, ast.List):
        return [to_value(element) for element in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(to_value(element) for element in node.elts)
    if isinstance(node, ast.Dict):
        return to_dict(node)
    if isinstance(node, ast.BinOp):
        return evaluate(node)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        if node.keywords:
            return {call_name(node): call_arguments(node)}
        return source_text(node)
    if isinstance(node, ast.Subscript):
        # BFCL prints the two parts separately, so ``x[1, 2]`` becomes ``x[(1, 2)]`` and
        # ``(a + b)[0]`` loses its parentheses: ``a + b[0]``.
        return f"{source_text(node.value)}[{source_text(node.slice)}]"
    raise DecodeError(f"Unsupported AST type: {type(node).__name__}")


def to_dict(node: ast.Dict) -> dict[Any, Any]:
    result: dict[Any, Any] = {}
    for key, value in zip(node.keys, node.values):
        if key is None:
            raise DecodeError("Unsupported AST type: NoneType (dict unpacking)")
        resolved_key = to_value(key)
        try:
            result[resolved_key] = to_value(value)
        except TypeError as exc:  # an unhashable key: a list, a dict
            raise DecodeError(f"TypeError: {exc}") from None
    return result


def source_text(node: ast.expr) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError, MemoryError) as exc:
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None
