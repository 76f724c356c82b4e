"""BFCL's prompting decoder for JavaScript calls: ``func(name=value, ...)``.

Behaves like ``default_decode_ast_prompting(text, ReturnFormat.JAVASCRIPT)`` from
bfcl-eval 2026.3.23 (docs/bfcl_reference.md section 3.1), on the current tree-sitter API:

- the text gets BFCL's ``[...]`` clean-up, then loses its first and last character;
- any ERROR node in the tree rejects it (``decoder_failed``);
- the call is the first top-level statement that is a call expression (``x = 1; f(a=1)``
  finds ``f``; ``var a = f(a=1)``, ``await f()``, ``(f())`` or ``{f()}`` are not calls at the
  top level); none gives BFCL's ``None``, which its runner reports as
  ``decoder_wrong_output_format``;
- the name is the source text of the callee (``a.b``, ``f(x=1)`` for ``f(x=1)(y=2)``); the
  arguments are the children of the node right after the callee, so ``f?.(x=1)`` has none;
- arguments: ``name=value`` (plain ``=`` only; the key is the first child's text, the value
  the third child's, which is a comment in ``x=/*c*/1``); a bare identifier or ``true`` goes
  under the key None; everything else is dropped; a repeated key (None included) fails;
- values are source text; when it starts and ends with the same quote (``"`` or ``'``) that
  pair is removed, so ``"a" + "b"`` gives ``a" + "b`` as in BFCL.
"""

from __future__ import annotations

from typing import Any

from handlers import register_handler
from handlers.base import Call, DecodeError
from handlers.bfcl_text import bracketed
from handlers.tree_sitter_support import encode_source, has_error_node, parse

_UNNAMED_ARGUMENTS = {"identifier", "true"}


@register_handler("javascript")
def decode(text: str) -> list[Call]:
    """Decode BFCL's JavaScript prompting format into (at most) one call."""
    root = parse(encode_source(bracketed(text)[1:-1]), "javascript")
    if has_error_node(root):
        raise DecodeError("Error js parsing the source code.")
    call = first_call(root)
    if call is None:
        raise DecodeError("no call statement in the text", kind="decoder_wrong_output_format")
    callee, arguments = call.children[0], call.children[1]
    return [Call(node_text(callee), call_arguments(arguments))]


def first_call(root: Any) -> Any:
    for statement in root.children:
        if statement.type == "expression_statement" and statement.children[0].type == "call_expression":
            return statement.children[0]
    return None


def call_arguments(arguments: Any) -> dict[Any, str]:
    result: dict[Any, str] = {}
    for child in arguments.children:
        if child.type == "assignment_expression":
            key: Any = node_text(child.children[0])
            value = without_quotes(node_text(child.children[2]))
        elif child.type in _UNNAMED_ARGUMENTS:
            key, value = None, node_text(child)
        else:
            continue
        if key in result:
            raise DecodeError("Error: Multiple arguments with the same name are not supported.")
        result[key] = value
    return result


def node_text(node: Any) -> str:
    return node.text.decode("utf-8")


def without_quotes(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value
