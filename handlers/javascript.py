"""BFCL's prompting decoder for JavaScript calls: ``func(name=value, ...)``.

``decode`` behaves like ``default_decode_ast_prompting(text, ReturnFormat.JAVASCRIPT)`` of
bfcl-eval 2026.3.23 on the current tree-sitter API; its docstring gives the rules and the known
divergences (BFCL's grammar is tree-sitter-javascript 0.21.4, ours 0.25), and ``bfcl_statements``
splits statements where BFCL's grammar split them. Plain calls skip the tree
(``fcenv.handlers.javascript_fast``). Decoders: docs/environment.md#decoders-checkers-and-facets;
where we differ from BFCL on purpose: docs/parity.md.
"""

from __future__ import annotations

from typing import Any

from fcenv.handlers import register_handler
from fcenv.handlers.base import Call, DecodeError
from fcenv.handlers.bfcl_text import bracketed
from fcenv.handlers.javascript_fast import read_javascript_call
from fcenv.handlers.tree_sitter_support import MAX_SOURCE_CHARS, encode_source, has_error_node, parse, preorder

_UNNAMED_ARGUMENTS = {"identifier", "true"}


@register_handler("javascript")
def decode(text: str) -> list[Call]:
    """Decode BFCL's JavaScript prompting format into (at most) one call.

    The text gets BFCL's ``[...]`` clean-up, then loses its first and last character; any ERROR
    node rejects it (``decoder_failed``). The call is the first top-level statement that is a call
    expression (``x = 1; f(a=1)`` finds ``f``; ``var a = f(a=1)``, ``await f()``, ``(f())`` or
    ``{f()}`` are not calls at the top level); none gives BFCL's ``None``, which its runner
    reports as ``decoder_wrong_output_format``. Its name is the callee's source text (``a.b``,
    ``f(x=1)`` for ``f(x=1)(y=2)``); its arguments are the children of the node right after the
    callee (``call_arguments``), so ``f?.(x=1)`` has none.

    Known divergences, on text the two grammar versions read differently, each rejected by one
    side and accepted by the other: an unterminated template literal (a fence followed by more
    text, ````` ```javascript\nf(a=1)\n```; `````: BFCL's grammar closes it with a MISSING backtick
    and decodes ``f``, ours reports an ERROR); ``import.x`` for any ``x`` but ``meta`` (a member
    expression to the old grammar); keywords as bare values (``f(a=in)``, ``f(a=for)`` decode in
    BFCL, ``f(a=await)`` does not; ``using x = y;`` declarations are new syntax); other error
    recovery on broken text: about 1 in 1,000 randomly corrupted BFCL answers
    (tests/parity/test_handlers_parity_java_js.py holds the cases that were brought into line).
    """
    code = bracketed(text)[1:-1]
    if len(code) <= MAX_SOURCE_CHARS:
        calls = read_javascript_call(code)  # one plain call: no syntax tree needed
        if calls is not None:
            return calls
    root = parse(encode_source(code), "javascript")
    if has_error_node(root) or old_grammar_rejects(root):
        raise DecodeError("Error js parsing the source code.")
    source = root.text
    for statement in root.children:
        if statement.type != "expression_statement":
            continue
        for name, arguments in bfcl_statements(statement.children[0], source):
            if arguments is not None:
                return [Call(name, call_arguments(arguments))]
    raise DecodeError("no call statement in the text", kind="decoder_wrong_output_format")


def old_grammar_rejects(root: Any) -> bool:
    """Where the old grammar's error recovery failed but the current one invents a ``)``.

    When a call lacks its closing parenthesis, both grammars usually insert a MISSING ``)``.
    The old one instead reported an ERROR when the last argument could also begin an arrow
    function's parameter list: an arrow function, ``[]``, ``{}`` or ``{x}`` (alone or as the
    value of ``name=``), or a chained assignment ``a=b=...``. Found by differential testing
    against BFCL (tests/parity/test_handlers_parity_java_js.py); other recovery differences remain.
    """
    if not root.has_error:
        return False
    for node in preorder(root, prune=True):
        if not (node.is_missing and node.type == ")" and node.parent is not None
                and node.parent.type == "arguments"):
            continue
        last = node.prev_named_sibling
        depth = 0
        while last is not None and last.type == "assignment_expression":
            last = last.child_by_field_name("right")
            depth += 1
        if last is None:
            continue
        if depth >= 2 or last.type == "arrow_function" or _empty_or_shorthand(last):
            return True
    return False


def _empty_or_shorthand(node: Any) -> bool:
    if node.type == "array":
        return node.named_child_count == 0
    if node.type == "object":
        children = node.named_children
        return not children or (len(children) == 1 and children[0].type == "shorthand_property_identifier")
    return False


def bfcl_statements(expression: Any, source: bytes) -> list[tuple[str, Any]]:
    """The statements BFCL's grammar saw in one statement of ours, as (callee text,
    arguments node) for calls and (text, None) for anything else.

    The current grammar continues an expression into a template literal on the next line
    (``f(a=1)\n`x``` is one tagged-template call); the old one ended the statement at the
    line break (texts with stray Markdown fences, two fenced blocks say, meet it). So the chain
    of tagged templates is cut at every template that follows a line break: the first piece is
    a node of our tree, a later piece is a run of templates, a call (tagged template) when it
    holds more than one.
    """
    links = []  # (call node, template) pairs, innermost first once reversed
    node = expression
    while node.type == "call_expression":
        template = node.child_by_field_name("arguments")
        if template is None or template.type != "template_string":
            break
        links.append((node, template))
        node = node.child_by_field_name("function")
    links.reverse()
    previous_end = node.end_byte
    cuts = []
    for index, (_, template) in enumerate(links):
        if _has_line_break(source[previous_end:template.start_byte]):
            cuts.append(index)
        previous_end = template.end_byte
    if not cuts:
        return [_as_statement(expression)]
    pieces = [_as_statement(node if cuts[0] == 0 else links[cuts[0] - 1][0])]
    for start, stop in zip(cuts, cuts[1:] + [len(links)]):
        templates = [template for _, template in links[start:stop]]
        if len(templates) == 1:
            pieces.append((node_text(templates[0]), None))
        else:
            callee = source[templates[0].start_byte:templates[-2].end_byte].decode("utf-8")
            pieces.append((callee, templates[-1]))
    return pieces


def _as_statement(node: Any) -> tuple[str, Any]:
    if node.type == "call_expression":
        return node_text(node.children[0]), node.children[1]
    return node_text(node), None


def _has_line_break(gap: bytes) -> bool:
    """A line terminator between two tokens, not counting those inside /* */ comments."""
    text = gap.decode("utf-8", errors="replace")
    position = 0
    while True:
        comment = text.find("/*", position)
        outside = text[position:comment if comment >= 0 else len(text)]
        if any(mark in outside for mark in ("\n", "\r", "\u2028", "\u2029")):
            return True
        if comment < 0:
            return False
        end = text.find("*/", comment + 2)
        if end < 0:
            return False
        position = end + 2


def call_arguments(arguments: Any) -> dict[Any, str]:
    """BFCL's arguments: ``name=value`` (plain ``=`` only; the key is the first child's text, the
    value the third child's, which is a comment in ``x=/*c*/1``); a bare identifier or ``true``
    under the key None; everything else dropped; a repeated key (None included) fails."""
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
    """A value's source text less a pair of the same quote (``"`` or ``'``) at its two ends, so
    ``"a" + "b"`` gives ``a" + "b`` as in BFCL."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value
