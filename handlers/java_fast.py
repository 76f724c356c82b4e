"""A fast path for the Java decoder: one plain call statement, read without tree-sitter.

Most Java answers are one call statement with keyword arguments
(``Obj.method(a="x", b=42L, c=new ArrayList<>(Arrays.asList(1, 2)));``), and building and walking
a syntax tree costs several times more than reading such a text. ``read_java_call`` reads it
from its tokens and answers the call (value for value what ``fcenv.handlers.java`` renders from
the tree), the parser's certain failure, or None (the caller parses); its docstring gives the
shape and why each answer is certain. Why and how fast:
docs/benchmarks/verdicts.md#how-it-got-past-2x.
"""

from __future__ import annotations

import re
from typing import Any

from fcenv.handlers.base import Call, DecodeError

# Character literals of several characters are errors to Java but not to tree-sitter, in
# BFCL's grammar and ours alike; an empty one is an error to both (left to the parser).
_TOKEN = re.compile(r"""[ \t\n]*+([A-Za-z_$][\w$]*+|\d[\w.$]*+|"[^"\\\n\r\x00-\x1f\x7f]*+"|'[^'\\\n\r\x00-\x1f\x7f]++'|::|.)""",
                    re.ASCII | re.DOTALL)
_NUMBER = re.compile(r"(?:[1-9]\d*+|0)(?:\.\d++)?+[fFdD]?|(?:[1-9]\d*+|0)[lL]", re.ASCII)
_RESERVED = frozenset((
    "abstract assert boolean break byte case catch char class const continue default do double else enum extends "
    "final finally float for goto if implements import instanceof int interface long native new package private "
    "protected public return short static strictfp super switch synchronized this throw throws transient try void "
    "volatile while true false null _"
).split())
# Restricted identifiers: plain names inside an expression (BFCL's grammar agrees), but words
# that open declarations or statements where a statement or a type begins.
_CONTEXTUAL = frozenset("exports module open opens permits provides record requires sealed to transitive uses var when with yield".split())
_LITERALS = frozenset(("true", "false", "null"))
_PRIMITIVES = frozenset(("int", "long", "short", "byte", "char", "float", "double", "boolean"))
_MAX_DEPTH = 20
# Without its ";", a call statement is an error that tree-sitter recovers from the cheaper
# way: wrapping the call in an ERROR node costs about one per character plus a constant,
# inventing the missing ";" a slightly larger constant. So a short call (``f(a=1)``, up to
# about ten characters) is rejected and a longer one accepted. The fast path only answers
# well above that edge and leaves the rest to the parser.
_SURELY_RECOVERED = 20


class _Unsure(Exception):
    """The text leaves the shape: let tree-sitter decide."""


def read_java_call(code: str) -> list[Call] | None:
    """The call in ``code`` (the text after BFCL's clean-up) if it has the shape, else None.

    The shape: ASCII only; a dotted callee; ``name=value`` arguments (no positional ones, no
    repeated name); then a ``;`` and nothing else, or no ``;`` for a call of 20 characters or
    more (``_SURELY_RECOVERED``). Values, with BFCL's rendering (a node's children joined without
    spaces, except where noted): a string or (non-empty) character literal without backslashes,
    its content at the top level, its source text inside another value; a decimal number
    (``L``/``f``/``d`` suffixes), optionally negated; ``true``, ``false``, ``null``; a dotted name
    ``a.b.c``; a method call ``a.b(...)`` or a class literal ``a.B.class``, as its exact source
    text; ``new T(args)`` (``T`` dotted, with ``<>`` or ``<A, B>`` type arguments) as
    ``new T(a, b)``, also with an anonymous class body of initializer blocks holding call
    statements (BFCL drops the body); ``new T[]{items}`` (``T`` also a primitive type) as
    ``new T[]{a,b}``. Reserved words never stand where a name is read (``f(a=class)`` is left to
    the parser), so every text in the shape is one complete, error-free statement.

    Raises ``DecodeError`` where a scalar argument (a literal or a dotted name) runs into a second
    operand, the commonest broken text, an unquoted string of words (``f(a=1, b=John Doe);``): an
    error wherever it stands, which tree-sitter's error recovery keeps in an ERROR node (no token
    it could invent lets an operand complete a construct), and BFCL rejects any ERROR node. And
    for calls joined by commas (``f(a=1), f(a=2);``): Java has no comma operator, and no statement
    goes on after a call with a comma. Recovering costs tree-sitter 30-60 µs a text."""
    if not code.isascii():
        return None  # BFCL cuts texts with byte offsets; leave that to the full decoder
    tokens = _TOKEN.findall(code)
    try:
        return [_Reader(code, tokens).statement()]
    except _Unsure:
        return None


def _is_name(token: str) -> bool:
    return (token[0].isalpha() or token[0] in "_$") and token not in _RESERVED


class _Reader:
    __slots__ = ("code", "tokens", "pos", "depth", "spans")

    def __init__(self, code: str, tokens: list[str]):
        self.code = code
        self.tokens = tokens + ["", ""]
        self.pos = 0
        self.depth = 0
        self.spans: list[tuple[int, int]] | None = None  # where each token is, when needed

    def take(self, expected: str) -> None:
        if self.tokens[self.pos] != expected:
            raise _Unsure
        self.pos += 1

    def name(self) -> str:
        token = self.tokens[self.pos]
        if not token or not _is_name(token):
            raise _Unsure
        self.pos += 1
        return token

    def dotted(self, leading: bool = False) -> list[str]:
        """A dotted name; ``leading``: it starts a statement or names a type."""
        parts = [self.name()]
        if leading and parts[0] in _CONTEXTUAL:
            raise _Unsure
        while self.tokens[self.pos] == "." and self.tokens[self.pos + 1] != "class":
            self.pos += 1
            parts.append(self.name())
        return parts

    def statement(self) -> Call:
        callee = ".".join(self.dotted(leading=True))
        if not self.code.lstrip(" \t\n").startswith(callee):
            raise _Unsure  # ``a . f``: BFCL keeps the object's own spacing; not worth it here
        self.take("(")
        arguments: dict[Any, str] = {}
        if self.tokens[self.pos] != ")":
            while True:
                key = self.name()
                self.take("=")
                if key in arguments:
                    raise _Unsure  # a repeated name fails; tree-sitter's path says so
                start = self.pos
                arguments[key] = self.value(top=True)
                if self.tokens[self.pos] != ",":
                    if self.runs_into_operand(start):
                        raise DecodeError("Error parsing java the source code.")  # the parser's failure
                    break
                self.pos += 1
        self.take(")")
        if self.tokens[self.pos] == ",":
            raise DecodeError("Error parsing java the source code.")  # calls joined by commas
        if self.tokens[self.pos] == ";":
            self.pos += 1
        elif len(self.code.strip(" \t\n")) < _SURELY_RECOVERED:
            raise _Unsure
        if self.tokens[self.pos] != "":
            raise _Unsure
        return Call(callee, arguments)

    def runs_into_operand(self, start: int) -> bool:
        """Whether the value read from token ``start`` is a scalar (a literal, a dotted name,
        ``-`` and a number) and the next token is a second operand: a name that opens nothing,
        a number (not a string: three quotes open a text block) or ``!`` (prefix only; ``!=``
        is left alone)."""
        for token in self.tokens[start:self.pos]:
            if token not in (".", "-") and not (token[0] in "\"'" or token[0].isdigit() or _is_name(token)
                                                or token in _LITERALS):
                return False
        token = self.tokens[self.pos]
        if token == "!":
            return self.tokens[self.pos + 1] != "="
        return bool(token) and (token[0].isdigit() or (_is_name(token) and token not in _CONTEXTUAL))

    def value(self, top: bool = False) -> str:
        token = self.tokens[self.pos]
        if not token:
            raise _Unsure
        first = token[0]
        if first == '"' or first == "'":
            if len(token) < 3 - (first == '"') or token[-1] != first:
                raise _Unsure  # a quote the tokenizer could not close (an escape, a line break)
            self.pos += 1
            return token[1:-1] if top else token
        if first.isdigit() or token == "-":
            return self.number()
        if token in _LITERALS:
            self.pos += 1
            return token
        if token == "new":
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise _Unsure
            self.pos += 1
            rendered = self.creation()
            self.depth -= 1
            return rendered
        start = self.pos
        parts = self.dotted()
        if self.tokens[self.pos] == "(":
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise _Unsure
            self.pos += 1
            self.values(")")  # read to check the shape; a method call renders as its source
            self.depth -= 1
            if self.tokens[self.pos] in (".", "["):
                raise _Unsure
            return self.source(start, self.pos)
        if self.tokens[self.pos] == ".":  # ``a.B.class``: a class literal renders as its source
            self.pos += 2
            return self.source(start, self.pos)
        if self.tokens[self.pos] in ("[", "::"):
            raise _Unsure
        return ".".join(parts)

    def number(self) -> str:
        sign = ""
        if self.tokens[self.pos] == "-":
            sign = "-"
            self.pos += 1
        token = self.tokens[self.pos]
        if not token or not _NUMBER.fullmatch(token):
            raise _Unsure
        self.pos += 1
        return sign + token

    def values(self, closer: str) -> list[str]:
        """Values separated by commas up to ``closer`` (taken), each rendered nested."""
        items: list[str] = []
        if self.tokens[self.pos] == closer:
            self.pos += 1
            return items
        while True:
            start = self.pos
            items.append(self.value())
            token = self.tokens[self.pos]
            if token != closer and token != "," and self.runs_into_operand(start):
                raise DecodeError("Error parsing java the source code.")  # the parser's failure
            self.pos += 1
            if token == closer:
                return items
            if token != ",":
                raise _Unsure

    def creation(self) -> str:
        """After ``new``: ``T(args)`` or ``T[]{items}``."""
        token = self.tokens[self.pos]
        if token in _PRIMITIVES:
            self.pos += 1
            type_name = token
        else:
            type_name = ".".join(self.dotted(leading=True))
            if self.tokens[self.pos] == "<":
                type_name += self.type_arguments()
        if self.tokens[self.pos] == "(":
            self.pos += 1
            arguments = self.values(")")
            if self.tokens[self.pos] == "{":
                self.initializer_body()  # an anonymous class: BFCL drops its body
            if self.tokens[self.pos] in (".", "["):
                raise _Unsure  # a call on the new object
            return f"new {type_name}({', '.join(arguments)})"
        if self.tokens[self.pos] == "[" and self.tokens[self.pos + 1] == "]" and self.tokens[self.pos + 2] == "{":
            if "<" in type_name:
                raise _Unsure
            self.pos += 3
            items = self.values("}")
            if self.tokens[self.pos] in (".", "["):
                raise _Unsure
            return f"new {type_name}[]{{{','.join(items)}}}"
        raise _Unsure

    def initializer_body(self) -> None:
        """An anonymous class body of instance initializers holding call statements
        (``{{ put("a", 1); }}``, the double-brace idiom) or nothing: read to check its shape."""
        self.take("{")
        while self.tokens[self.pos] == "{":
            self.pos += 1
            while self.tokens[self.pos] != "}":
                self.dotted(leading=True)
                self.take("(")
                self.values(")")
                self.take(";")
            self.pos += 1
        self.take("}")

    def type_arguments(self) -> str:
        self.take("<")
        if self.tokens[self.pos] == ">":
            self.pos += 1
            return "<>"
        names = [".".join(self.dotted(leading=True))]
        while self.tokens[self.pos] == ",":
            self.pos += 1
            names.append(".".join(self.dotted(leading=True)))
        self.take(">")
        return f"<{','.join(names)}>"

    def source(self, start: int, stop: int) -> str:
        """The exact text of tokens ``start`` to ``stop`` (exclusive), inner spacing kept."""
        if self.spans is None:
            self.spans = [match.span(1) for match in _TOKEN.finditer(self.code)]
        return self.code[self.spans[start][0]:self.spans[stop - 1][1]]
