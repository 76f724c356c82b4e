"""A fast path for the Python decoder: the common shape of a call list, read without ``ast``.

Most model answers are a plain ``[f(a=1, b='x'), g.h(c=[1, 2])]``, or prose that cannot be
Python at all (``Sure! ...``). Building a syntax tree for them costs more than deciding, so
``read_calls`` reads such texts directly and answers one of three ways:

- a list of ``Call``: the text is in the subset below, and the value equals what
  ``fcenv.handlers.python.decode`` builds from the syntax tree (types included);
- ``DecodeError``: the text certainly is not Python (Python's own parser would fail);
- ``None``: anything else; the caller parses the text with ``ast`` as before.

The subset: calls named by dotted names, with keyword arguments (positional ones before
them are read and dropped, as BFCL drops them) whose values are string literals without
backslashes (triple-quoted ones may span lines), decimal numbers (with a leading minus),
``True``/``False``/``None``, bare names, and lists, tuples and dicts of those. The tokenizer only emits a token when it
is the token Python's tokenizer would emit at that place (a name glued to a quote is a
string prefix, a number glued to a letter is not a plain number, ``'''`` opens a triple
quote...), except that a name and the ``=`` after it are one token (a keyword argument's
name: fewer tokens to match and read); anything it is not sure of becomes an UNKNOWN token,
and reading stops there with ``None``. So every token before the first UNKNOWN is exactly
Python's (or two of them), which is what
makes the certain failures certain: unbalanced brackets, a character Python never accepts
outside a string (``!``, ``$``, ``?``, a backtick), or two operands in a row (``I cannot``,
``None of``, ``[f()] Done``), which no Python expression contains.
"""

from __future__ import annotations

import keyword
import re
import string
from typing import Any, NoReturn

from fcenv.handlers.base import Call, DecodeError

# One token per match, most frequent kinds first (the order only matters for speed: no two
# alternatives match at the same place, except the catch-all at the end).
_TOKEN = re.compile(
    r"""[ \t\n]*+(
        [][(){},:.~](?![=*/<>])                                            # brackets, separators
      | [A-Za-z_]\w*+(?:[ \t\n]*+=(?!=)|['"](?<=\b[rRuUbBfFtT]['"])|['"](?<=\b[bBrRfFtT][rRbBfFtT]['"])|[\x80-\U0010ffff])?
                                                                          # a name; with its "=": ARGUMENT;
                                                                          # glued to non-ASCII, or a
                                                                          # string prefix: UNKNOWN
      | '{3}(?:(?!'{3})[^\\\r\x00-\x08\x0b-\x1f\x7f\ud800-\udfff])*+'{3}             # triple-quoted, no backslash
      | "{3}(?:(?!"{3})[^\\\r\x00-\x08\x0b-\x1f\x7f\ud800-\udfff])*+"{3}
      | '[^'\\\n\r\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]++'|''(?!')        # strings Python reads as they are
      | "[^"\\\n\r\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]++"|""(?!")
      | \d++(?:\.\d++)?+(?:[eE][+-]?\d++)?+[A-Za-z_.\x80-\U0010ffff]?         # a number; glued on: UNKNOWN
      | '(?!'')[^'\\\n]*+(?:\n|\Z)|"(?!"")[^"\\\n]*+(?:\n|\Z)               # a string never closed: NEVER
      | \*\*=?|//=?|>>=?|<<=?|[=!<>:+\-*/%&|^@]=|->                           # operators
      | [=+\-*/%<>&|^@!$?`]
      | .                                                                 # anything else: UNKNOWN
    )""",
    re.ASCII | re.VERBOSE | re.DOTALL,
)

# Prose opens with two words in a row ("[I cannot", "[None of") or a word and a mark
# ("[Sure!"): no Python expression does, so one match settles most prose. The first word is
# a whole name (whitespace or a mark ends it); whatever the second word is glued to, it
# starts another operand (a name, or a prefixed string), unless it is a keyword.
_PROSE = re.compile(r"\[[ \t\n]*+([A-Za-z_]\w*+)(?:[ \t\n]++([A-Za-z_]\w*+)|[ \t\n]*+([!$?`])(?!=))", re.ASCII)

# Tokens that can never stand where an operand has just ended (``x <token>``), in any
# Python expression: a dict/set display, or an assignment (a keyword argument's ``=`` comes
# right after its name, which the reader takes before any operand). Another operand (a name,
# a number, a string after a non-string) cannot either, nor a ``never`` token (``_kind``).
_NEVER_AFTER_OPERAND = frozenset("{=")
_PUNCTUATION = "[](){},:=.+-*/%<>&|^~@"
_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_CLOSING = frozenset(_CLOSERS.values())
_KEYWORDS = frozenset(keyword.kwlist)
_CONSTANTS = {"True": True, "False": False, "None": None}
_MAX_DEPTH = 50
_MAX_DIGITS = 100
_DIGITS = frozenset(string.digits)
_NAME_START = frozenset(string.ascii_letters + "_")
_WORD = _NAME_START | _DIGITS
_QUOTES = frozenset("'\"")
_KIND_BY_FIRST = {
    "": "end",
    **dict.fromkeys(_NAME_START, "name"),
    **dict.fromkeys(_DIGITS, "number"),
    **dict.fromkeys(_QUOTES, "string"),
    **dict.fromkeys(_PUNCTUATION, "punctuation"),
    **dict.fromkeys("$?`", "never"),
    "!": "!",
}


class _Unsure(Exception):
    """The text leaves the subset (or reaches an UNKNOWN token): let ``ast`` decide."""


def read_calls(source: str) -> list[Call] | None:
    """Read ``source`` (bracketed model text) in the subset; see the module docstring."""
    prose = _PROSE.match(source)
    if prose is not None:
        first, second, mark = prose.groups()
        if mark is not None:
            raise DecodeError(f"invalid syntax: {mark!r} right after {first!r}")
        if second is not None and (first not in _KEYWORDS or first in _CONSTANTS) and second not in _KEYWORDS:
            raise DecodeError(f"invalid syntax: {second!r} right after {first!r}")
    tokens = _TOKEN.findall(source)
    tokens += ("", "")  # the end (twice, so that one token of look-ahead never runs out)
    try:
        reader = _Reader(tokens)
        calls = reader.top_level()
    except _Unsure:
        return None
    return calls


def _kind(token: str) -> str:
    """``name``, ``argument``, ``number``, ``string``, ``end``, ``unknown``, ``never`` or the
    token itself.

    ``argument``: a name and the ``=`` after it, two of Python's tokens in one (a keyword
    argument's name, the commonest pair: one match instead of two). ``never``: Python rejects
    the text wherever this token stands (a character it never accepts outside a string, or a
    string that is never closed)."""
    kind = _KIND_BY_FIRST.get(token[:1], "unknown")
    if kind == "name":
        if token[-1] in _WORD:
            return kind
        return "argument" if token[-1] == "=" else "unknown"  # else glued to non-ASCII or a quote
    if kind == "number":
        return kind if token[-1] in _DIGITS else "unknown"  # not glued to a letter or dot
    if kind == "string":
        if len(token) == 1:
            return "unknown"  # an opening quote the tokenizer is not sure of
        return kind if token[-1] == token[0] else "never"
    if kind == "punctuation":
        return token
    if kind == "!":
        return token if token == "!=" else "never"
    return kind


class _Reader:
    __slots__ = ("tokens", "pos", "depth")

    def __init__(self, tokens: list[str]):
        self.tokens = tokens
        self.pos = 0
        self.depth = 0

    # -- the shape of the whole text ---------------------------------------------------

    def top_level(self) -> list[Call]:
        if self.tokens[0] != "[":
            raise _Unsure
        self.pos = 1
        calls: list[Call] = []
        while True:
            token = self.tokens[self.pos]
            if token == "]":
                self.pos += 1
                break
            calls.append(self.element())
            token = self.tokens[self.pos]
            if token == ",":
                self.pos += 1
            elif token != "]":
                self.unexpected("[")
        self.after_top_level()
        return calls

    def after_top_level(self) -> None:
        token = self.tokens[self.pos]
        if token == "":
            return
        if token in _CLOSING:
            raise DecodeError(f"unmatched {token!r}")
        self.never_after_operand(token)
        raise _Unsure

    def element(self) -> Call:
        token = self.tokens[self.pos]
        if self.tokens[self.pos + 1] == "(" and token[0] in _NAME_START and token[-1] in _WORD:
            if token in _KEYWORDS:
                raise _Unsure
            self.pos += 2
            return Call(token, self.arguments())  # an undotted name: the common case
        if token[-1:] == "=" and token[0] in _NAME_START:  # ``[x = 1]``: no expression starts so
            raise DecodeError(f"invalid syntax: {token!r} where a call should be")
        if _kind(token) == "name" and token not in _KEYWORDS:
            name = self.dotted_name()
            if self.tokens[self.pos] == "(":
                self.pos += 1
                arguments = self.arguments()
                return Call(name, arguments)
            if self.tokens[self.pos] == "[":
                self.skip_brackets()  # ``python[...]``: a fenced answer's language tag
            if self.tokens[self.pos] in (",", "]"):
                raise DecodeError("the text is not a call or a list of calls")
            self.unexpected("[")
        # Any other operand (a literal, a list...) followed by "," or "]" is not a call,
        # whatever a list or dict display holds (a parenthesized one may be a call: "(f())").
        if token == "[" or token == "{":
            self.skip_brackets()
        else:
            self.value()
        if self.tokens[self.pos] in (",", "]"):
            raise DecodeError("the text is not a call or a list of calls")
        self.unexpected("[")

    def skip_brackets(self) -> None:
        """Pass over a bracketed group, whatever its content, to the token after it."""
        open_brackets = []
        while True:
            token = self.tokens[self.pos]
            self.pos += 1
            if token in _CLOSERS:
                open_brackets.append(token)
            elif token in _CLOSING:
                opener = open_brackets.pop()
                if token != _CLOSERS[opener]:
                    raise DecodeError(f"closing {token!r} does not match opening {opener!r}")
                if not open_brackets:
                    return
            elif token == "":
                raise DecodeError(f"{open_brackets[-1]!r} was never closed")
            else:
                kind = _kind(token)
                if kind == "never":
                    raise DecodeError(f"invalid syntax: {token!r}")
                if kind == "unknown":
                    raise _Unsure

    def dotted_name(self) -> str:
        parts = [self.tokens[self.pos]]
        self.pos += 1
        while self.tokens[self.pos] == ".":
            part = self.tokens[self.pos + 1]
            kind = _kind(part)
            if kind != "name" or part in _KEYWORDS:
                if kind == "argument":
                    raise DecodeError(f"invalid syntax: {part!r} where a call should be")  # ``[a.b = 1]``
                raise _Unsure
            parts.append(part)
            self.pos += 2
        return ".".join(parts)

    def arguments(self) -> dict[str, Any]:
        tokens = self.tokens
        arguments: dict[str, Any] = {}
        keywords_seen = False
        while True:
            token = tokens[self.pos]
            if token == ")":
                self.pos += 1
                return arguments
            if token[-1] == "=" and token[0] in _NAME_START:  # ``name=``: an argument token
                name = token[:-1].rstrip()
                if name in _KEYWORDS:
                    raise _Unsure
                self.pos += 1
                arguments[name] = self.value()
                keywords_seen = True
            else:
                if keywords_seen:
                    raise _Unsure  # positional after keyword (a SyntaxError), or ``*a`` / ``**k``
                self.value()  # positional: must be readable, then BFCL drops it
            token = tokens[self.pos]
            if token == ",":
                self.pos += 1
            elif token != ")":
                self.unexpected("(")

    # -- values --------------------------------------------------------------------------

    def value(self) -> Any:
        tokens = self.tokens
        pos = self.pos
        token = tokens[pos]
        self.pos = pos + 1
        first = token[:1]
        # The common literals first, classified inline (see ``_kind`` for the rules).
        if first in _QUOTES:
            if len(token) > 1 and token[-1] == first:
                if tokens[pos + 1][:1] in _QUOTES:
                    raise _Unsure  # implicit concatenation
                # A token that opens with three quotes is triple-quoted (two quotes alone
                # are the empty string, and the tokenizer never lets them run into a third).
                return token[3:-3] if token[1:3] == first * 2 and len(token) >= 6 else token[1:-1]
        elif first in _DIGITS:
            if token[-1] in _DIGITS:
                return _number(token)
        elif first in _NAME_START:
            if token[-1] in _WORD:
                if token in _CONSTANTS:
                    return _CONSTANTS[token]
                if token in _KEYWORDS or tokens[pos + 1] in ("(", ".", "["):
                    raise _Unsure  # a call, attribute or subscript: ``ast`` handles those
                return token
        elif token == "-" and _kind(tokens[pos + 1]) == "number":
            self.pos += 1
            return -_number(tokens[pos + 1])
        elif token in _CLOSERS:
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise _Unsure
            try:
                if token == "[":
                    return self.sequence("]")
                if token == "(":
                    return self.parenthesized()
                return self.dictionary()
            finally:
                self.depth -= 1
        self.pos = pos
        # Every caller has taken a closer that may stand here before asking for a value,
        # so a closer here (``f(a=)``, ``[1, )``) or the end is an error, as is ``never``, and
        # so is ``name=`` (``f(a=b=1)``): only a call's arguments hold one, read by ``arguments``.
        if token == "" or token in _CLOSING or _kind(token) in ("never", "argument"):
            raise DecodeError(f"invalid syntax: {token or 'the end'!r} where a value should be")
        raise _Unsure

    def sequence(self, closer: str) -> list[Any]:
        items: list[Any] = []
        while True:
            if self.tokens[self.pos] == closer:
                self.pos += 1
                return items
            items.append(self.value())
            token = self.tokens[self.pos]
            if token == ",":
                self.pos += 1
            elif token != closer:
                self.unexpected("[" if closer == "]" else "(")

    def parenthesized(self) -> Any:
        if self.tokens[self.pos] == ")":
            self.pos += 1
            return ()
        first = self.value()
        token = self.tokens[self.pos]
        if token == ")":
            self.pos += 1
            return first  # ``(x)`` is x, not a tuple
        if token != ",":
            self.unexpected("(")
        self.pos += 1
        return tuple([first, *self.sequence(")")])

    def dictionary(self) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        while True:
            if self.tokens[self.pos] == "}":
                self.pos += 1
                return result
            key = self.value()
            if self.tokens[self.pos] != ":":
                self.unexpected("{")
            self.pos += 1
            value = self.value()
            try:
                result[key] = value
            except TypeError:
                raise _Unsure from None  # an unhashable key: ``ast``'s path reports it
            token = self.tokens[self.pos]
            if token == ",":
                self.pos += 1
            elif token != "}":
                self.unexpected("{")

    # -- what may follow an operand ------------------------------------------------------

    def unexpected(self, opener: str) -> NoReturn:
        """An operand has just ended inside ``opener`` and the next token is not one the subset
        reads there: fail where no Python expression could go on like this, else defer."""
        token = self.tokens[self.pos]
        if token == "":
            raise DecodeError(f"{opener!r} was never closed")
        if token in _CLOSING and token != _CLOSERS[opener]:
            raise DecodeError(f"closing {token!r} does not match opening {opener!r}")
        self.never_after_operand(token)
        raise _Unsure

    def never_after_operand(self, token: str) -> None:
        """Fail on a token that cannot follow an operand in any Python expression."""
        kind = _kind(token)
        if (
            kind == "number"
            or (kind == "name" and token not in _KEYWORDS)
            or (kind == "argument" and token[:-1].rstrip() not in _KEYWORDS)
            or (kind == "string" and _kind(self.tokens[self.pos - 1]) != "string")
            or token in _NEVER_AFTER_OPERAND
            or kind == "never"
        ):
            raise DecodeError(f"invalid syntax: {token!r} right after an operand")


def _number(token: str) -> int | float:
    if len(token) > _MAX_DIGITS:
        raise _Unsure
    if "." in token or "e" in token or "E" in token:
        return float(token)
    if token[0] == "0" and token.strip("0"):
        raise _Unsure  # ``012``: a SyntaxError; ``ast`` reports it
    return int(token)
