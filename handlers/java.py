"""BFCL's prompting decoder for Java calls: ``obj.method(name=value, ...)``.

``decode`` behaves like ``default_decode_ast_prompting(text, ReturnFormat.JAVA)`` of bfcl-eval
2026.3.23 on the current tree-sitter API; its docstring gives the rules, ``_Source`` renders the
values as BFCL does (byte offsets cut from the decoded text included, on purpose). BFCL pins
tree-sitter-java 0.21.0, ours is 0.23.5: no difference in outcome was found on about 140,000
generated, corrupted and exotic texts (``tree_sitter_support``). Plain calls skip the tree
(``fcenv.handlers.java_fast``). Decoders: docs/environment.md#decoders-checkers-and-facets;
parity with BFCL: docs/parity.md.
"""

from __future__ import annotations

from typing import Any

from fcenv.handlers import register_handler
from fcenv.handlers.base import Call, DecodeError
from fcenv.handlers.bfcl_text import bracketed
from fcenv.handlers.java_fast import read_java_call
from fcenv.handlers.tree_sitter_support import MAX_SOURCE_CHARS, encode_source, has_error_node, parse, preorder

# Rendered as their exact source text rather than rebuilt from their children.
_VERBATIM = {"identifier", "method_invocation", "class_literal"}
_UNNAMED_ARGUMENTS = {"identifier", "class_literal"}
_QUOTED = {"string_literal", "character_literal"}


@register_handler("java")
def decode(text: str) -> list[Call]:
    """Decode BFCL's Java prompting format into (at most) one call.

    The text gets BFCL's ``[...]`` clean-up, then loses its first and last character; any ERROR
    node rejects it (``decoder_failed``; skipped characters such as ``ke\\y`` count as errors,
    see ``tree_sitter_support``); a tree without a method invocation gives BFCL's ``{}``, which
    its runner reports as ``decoder_wrong_output_format``. Only the first method invocation in
    document order counts; its name is ``<object text>.<name>`` (``a . b.f`` keeps the object's
    own spacing). Values nested more deeply than about 330 levels fail on both sides (Python's
    recursion limit), except ``new A(new A(...))``, which BFCL renders up to about 990 levels.
    """
    code = bracketed(text)[1:-1]
    if len(code) <= MAX_SOURCE_CHARS:
        calls = read_java_call(code)  # one plain call: no syntax tree needed
        if calls is not None:
            return calls
    root = parse(encode_source(code), "java")
    if has_error_node(root):
        raise DecodeError("Error parsing java the source code.")
    call = next((node for node in preorder(root) if node.type == "method_invocation"), None)
    if call is None:
        raise DecodeError("no method invocation in the text", kind="decoder_wrong_output_format")
    source = _Source(code)
    try:
        return [Call(source.call_name(call), source.call_arguments(call))]
    except RecursionError:
        raise DecodeError("argument nested too deeply") from None


class _Source:
    """Renders nodes of one parsed text the way BFCL's Java parser does.

    Arguments: ``name=value`` (any assignment, ``x+=1`` included: the key is the first child's
    text, the value the third child, which is a comment in ``x=/*c*/1``); a bare identifier or
    class literal goes under the key None; other positional arguments are dropped; a repeated
    key (None included) fails. Values are strings: a string or char literal loses its first and
    last character; method invocations, identifiers and class literals keep their source text;
    ``new T[..]{...}`` becomes ``new T[]{...}``; ``new T(args)`` becomes ``new T(a, b)``
    (anonymous class body dropped; arguments joined with ", "); everything else is its
    children's renderings joined without whitespace (``1 + 2`` gives ``1+2``); ``new T[n]``
    without an initializer fails. BFCL cuts every text out of the *decoded* string with
    tree-sitter's *byte* offsets, so after a non-ASCII character the texts shift; that is
    reproduced on purpose.
    """

    def __init__(self, code: str):
        self.code = code

    def text(self, node: Any) -> str:
        # Byte offsets applied to a str: deliberate, see the class docstring.
        return self.code[node.start_byte:node.end_byte]

    def call_name(self, call: Any) -> str:
        name = self.text(call.child_by_field_name("name"))
        target = call.child_by_field_name("object")
        return f"{self.text(target)}.{name}" if target is not None else name

    def call_arguments(self, call: Any) -> dict[Any, str]:
        arguments: dict[Any, str] = {}
        for child in call.child_by_field_name("arguments").children:
            if child.type == "assignment_expression":
                key: Any = self.text(child.children[0])
                value = self.top_value(child.children[2])
            elif child.type in _UNNAMED_ARGUMENTS:
                key, value = None, self.text(child)
            else:
                continue
            if key in arguments:
                raise DecodeError("Error: Multiple arguments with the same name are not supported.")
            arguments[key] = value
        return arguments

    def top_value(self, node: Any) -> str:
        if node.type in _QUOTED:
            return self.text(node)[1:-1]
        return self.render(node)

    def render(self, node: Any) -> str:
        kind = node.type
        if kind in _VERBATIM:
            return self.text(node)
        if kind == "array_creation_expression":
            initializer = node.child_by_field_name("value")
            if initializer is None:  # new int[3]: BFCL fails on the missing initializer
                raise DecodeError("array creation without an initializer")
            return f"new {self.render(node.child_by_field_name('type'))}[]{self.render(initializer)}"
        if kind == "object_creation_expression":
            arguments = node.child_by_field_name("arguments").named_children
            joined = ", ".join(self.render(argument) for argument in arguments)
            return f"new {self.render(node.child_by_field_name('type'))}({joined})"
        if node.child_count == 0:
            return self.text(node)
        return "".join(self.render(child) for child in node.children)
