"""What the Java and JavaScript decoders share: lazy parsers and BFCL's syntax-error test.

BFCL's parsers (tree-sitter 0.21) reject a text when ``"ERROR" in root_node.sexp()``.
That s-expression prints ERROR nodes as ``(ERROR ...)``, except an error *leaf* (one
unexpected character), which it prints as ``(UNEXPECTED 'x')``, and MISSING nodes (tokens
the parser invented, such as a forgotten ``;``) as ``(MISSING ...)``. So a tree is rejected
exactly when it holds an ERROR node that does not print as UNEXPECTED; ``has_error_node``
answers that without printing the whole tree (which for deeply nested trees costs a deep C
recursion). An ERROR node without visible children may still hide internal ones (a skipped
``ke\\y`` in Java is such a node and prints as ``(ERROR)``), so those few are printed alone.
Tree queries are not used: on some hostile inputs they take minutes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from fcenv.handlers.base import DecodeError

# Longer texts are refused before parsing. Real model outputs are a few kilobytes; error
# recovery on long garbage costs tree-sitter several microseconds per byte, and every
# later walk over the tree is Python code, so this keeps the worst case well under a second.
MAX_SOURCE_CHARS = 100_000

_languages: dict[str, Any] = {}
_local = threading.local()  # a Parser is not safe to share between threads


def _language(name: str) -> Any:
    if name not in _languages:
        from tree_sitter import Language

        if name == "java":
            import tree_sitter_java as grammar
        elif name == "javascript":
            import tree_sitter_javascript as grammar
        else:
            raise ValueError(f"no tree-sitter grammar for {name!r}")
        _languages[name] = Language(grammar.language())
    return _languages[name]


def parse(source: bytes, language: str) -> Any:
    """The syntax tree's root node; parsers are built on first use and reused per thread."""
    if len(source) > 4 * MAX_SOURCE_CHARS:
        raise DecodeError(f"text longer than {MAX_SOURCE_CHARS} characters")
    parsers = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    if language not in parsers:
        from tree_sitter import Parser

        parsers[language] = Parser(_language(language))
    tree = parsers[language].parse(source)
    if tree is None:
        raise DecodeError(f"tree-sitter could not parse the {language} text")
    return tree.root_node


def encode_source(text: str) -> bytes:
    if len(text) > MAX_SOURCE_CHARS:
        raise DecodeError(f"text longer than {MAX_SOURCE_CHARS} characters")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:  # lone surrogates; BFCL's bytes(code, "utf8") fails too
        raise DecodeError(f"UnicodeEncodeError: {exc}") from None


def preorder(root: Any, prune: bool = False) -> Iterator[Any]:
    """Nodes in document order (parents first), without recursion.

    With ``prune``, subtrees free of errors (``has_error`` false) are not entered.
    """
    cursor = root.walk()
    while True:
        node = cursor.node
        yield node
        if (not prune or node.has_error) and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


def has_error_node(root: Any) -> bool:
    """BFCL's ``"ERROR" in root_node.sexp()``."""
    if not root.has_error:
        return False
    for node in preorder(root, prune=True):
        if node.type == "ERROR" and (node.child_count > 0 or str(node).startswith("(ERROR")):
            return True
    return False
