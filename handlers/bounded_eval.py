"""Evaluate the operator expressions BFCL's Python decoder hands to ``eval``, without eval.

BFCL decodes a keyword value that is a ``BinOp`` (``a=3+4``) with
``eval(ast.unparse(node))``: real Python semantics over whatever the expression holds.
This module computes the same value for expressions built from literals, so the decoded
value matches BFCL's, while model text is never executed and never allowed to cost much:
results that would be huge (``9**9**9``, ``'a'*10**12``, ``1 << 10**9``) fail fast.

Supported inside the expression: constants, f-strings without replacement fields (``f'GBP'``
is the string ``'GBP'``), unary and binary operators, ``and``/``or``, comparisons (except
``is``), conditional expressions, list/tuple/set/dict displays (with ``*``/``**`` unpacking)
and subscripts. Everything else fails, even where BFCL's ``eval`` would succeed; these are
the documented divergences:

- names (BFCL's eval sees builtins such as ``__debug__`` and the globals of BFCL's
  ``model_handler.utils`` module, e.g. ``MAXIMUM_STEP_LIMIT + 1`` gives 21 there);
- calls and attribute access (``len('ab') + 1``, ``'a'.upper() + 'b'``), f-strings with
  replacement fields (``f'{1}'``: formatting runs code and widths can be made huge), lambdas,
  comprehensions, walrus, and ``is``/``is not`` comparisons;
- ``%`` string formatting with ``*`` widths;
- results beyond the bounds below (ints over ``MAX_INT_BITS`` bits, containers or strings
  whose logical size exceeds ``MAX_WEIGHT``, total work over ``WORK_BUDGET``).
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from typing import Any

from fcenv.handlers.base import DecodeError

# ~40k decimal digits: one multiplication of two such ints takes about a millisecond.
MAX_INT_BITS = 1 << 17
# Logical size of any intermediate value: characters of a string, or elements of a
# container counting shared references every time (``[[0]*1000]*1000`` weighs a million),
# because comparing, hashing or printing it costs that much.
MAX_WEIGHT = 1_000_000
# Total units of work for one expression, so that many medium-sized steps cannot add up
# to a hang either (a unit is roughly one element touched).
WORK_BUDGET = 10_000_000

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_SEQUENCES = (str, bytes, list, tuple)
# Width and precision fields of printf-style specs; a mapping key in parentheses is skipped.
_PRINTF_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d*)(?:\.(\*|\d*))?")


def evaluate(node: ast.expr) -> Any:
    """The value ``eval(ast.unparse(node))`` has in BFCL, or DecodeError."""
    # BFCL unparses first: that step alone fails on ints with more decimal digits than
    # Python's int-to-str limit, and on expressions nested deeper than the recursion limit.
    try:
        ast.unparse(node)
    except (ValueError, RecursionError, MemoryError) as exc:
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None
    try:
        value, _ = _Evaluator().eval(node)
    except DecodeError:
        raise
    except (Exception, RecursionError, MemoryError) as exc:  # the errors eval itself raises
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None
    return value


def _int_weight(value: int) -> int:
    return 1 + value.bit_length() // 64


def _scalar_weight(value: Any) -> int | None:
    if isinstance(value, int):  # bool too
        return _int_weight(value)
    if isinstance(value, (str, bytes)):
        return 1 + len(value)
    if value is None or value is Ellipsis or isinstance(value, (float, complex)):
        return 1
    return None


class _Evaluator:
    """One expression's evaluation; every value travels with its weight."""

    def __init__(self) -> None:
        self.work = 0

    def charge(self, units: int) -> None:
        self.work += units
        if self.work > WORK_BUDGET:
            raise DecodeError("expression too costly to evaluate")

    def measure(self, value: Any) -> int:
        """Logical size of ``value``, stopping as soon as it is known to be too big."""
        total = 0
        stack = [value]
        while stack:
            item = stack.pop()
            weight = _scalar_weight(item)
            if weight is not None:
                total += weight
            elif isinstance(item, dict):
                total += 1
                stack.extend(item.keys())
                stack.extend(item.values())
            elif isinstance(item, (list, tuple, set, frozenset)):
                total += 1
                stack.extend(item)
            else:
                total += 1
            if total > MAX_WEIGHT:
                raise DecodeError("expression value too large")
        self.charge(total)
        return total

    def eval(self, node: ast.expr) -> tuple[Any, int]:
        if isinstance(node, ast.Constant):
            return node.value, _scalar_weight(node.value) or 1
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.UnaryOp):
            value, weight = self.eval(node.operand)
            op = _UNARY[type(node.op)]
            self.charge(weight)
            result = op(value)
            return result, _scalar_weight(result) or weight
        if isinstance(node, ast.BoolOp):
            return self.boolean(node)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.IfExp):
            test, _ = self.eval(node.test)
            return self.eval(node.body if test else node.orelse)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return self.display(node)
        if isinstance(node, ast.Dict):
            return self.mapping(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.JoinedStr):
            return self.constant_fstring(node)
        raise DecodeError(f"cannot evaluate {type(node).__name__} without eval")

    def constant_fstring(self, node: ast.JoinedStr) -> tuple[str, int]:
        """An f-string whose parts are all text (``f'GBP'``, ``f'{{x}}'``) is that text."""
        if not all(isinstance(part, ast.Constant) for part in node.values):
            raise DecodeError("cannot evaluate an f-string with replacement fields without eval")
        text = "".join(part.value for part in node.values)
        self.charge(1 + len(text))
        return text, 1 + len(text)

    def binary(self, node: ast.BinOp) -> tuple[Any, int]:
        left, left_weight = self.eval(node.left)
        right, right_weight = self.eval(node.right)
        self.charge(left_weight + right_weight)
        op = type(node.op)
        self.check_growth(op, left, right, left_weight, right_weight)
        result = _BINARY[op](left, right)
        weight = _scalar_weight(result)
        if weight is not None:
            return result, weight
        if isinstance(result, (list, tuple)):
            # Sequence concatenation and repetition: known without walking the result.
            if op is ast.Add:
                weight = left_weight + right_weight - 1
            elif op is ast.Mult:
                seq_weight, count = (left_weight, right) if isinstance(left, (list, tuple)) else (right_weight, left)
                weight = 1 + (seq_weight - 1) * max(int(count), 0)
        if weight is None:
            weight = self.measure(result)
        if weight > MAX_WEIGHT:
            raise DecodeError("expression value too large")
        return result, weight

    def check_growth(self, op: type, left: Any, right: Any, left_weight: int, right_weight: int) -> None:
        """Refuse, before computing, the operations whose result or cost would explode."""
        if op is ast.Mult:
            for seq, seq_weight, count in ((left, left_weight, right), (right, right_weight, left)):
                if isinstance(seq, _SEQUENCES) and isinstance(count, int):
                    if count > 0 and (seq_weight - 1) * count > MAX_WEIGHT:
                        raise DecodeError("repetition too large")
                    self.charge(max(count, 0) * (seq_weight - 1))
                    return
        both_ints = isinstance(left, int) and isinstance(right, int)
        if not both_ints:
            if op is ast.Mod and isinstance(left, (str, bytes)):
                self.check_printf(left, right_weight)
            return
        if op is ast.Mult:
            if left.bit_length() + right.bit_length() > MAX_INT_BITS:
                raise DecodeError("integer too large")
            self.charge(left_weight * right_weight // 8)
        elif op in (ast.FloorDiv, ast.Mod):
            self.charge(left_weight * right_weight // 8)
        elif op is ast.Pow:
            if right > 0 and abs(left) > 1:
                bits = right * math.log2(abs(left))
                if bits > MAX_INT_BITS:
                    raise DecodeError("power too large")
                self.charge(int(bits / 64) ** 2 // 8)
        elif op is ast.LShift:
            if left != 0 and right > 0 and left.bit_length() + right > MAX_INT_BITS:
                raise DecodeError("shift too large")

    def check_printf(self, template: str | bytes, args_weight: int) -> None:
        # The result holds the template, the padding of every spec and, at worst, the
        # printed arguments once per spec (a mapping key may be used many times).
        text = template.decode("latin-1") if isinstance(template, bytes) else template
        padding = 0
        for match in _PRINTF_SPEC.finditer(text):
            padding += args_weight
            for field in match.groups():
                if field == "*":
                    raise DecodeError("'*' widths are not evaluated")
                if field:
                    if len(field) > 9:
                        raise DecodeError("format width too large")
                    padding += int(field)
        if padding > MAX_WEIGHT:
            raise DecodeError("format width too large")
        self.charge(padding)

    def boolean(self, node: ast.BoolOp) -> tuple[Any, int]:
        is_and = isinstance(node.op, ast.And)
        for operand in node.values:
            value, weight = self.eval(operand)
            # Short-circuit exactly like Python: later operands are never evaluated.
            if bool(value) != is_and:
                return value, weight
        return value, weight

    def compare(self, node: ast.Compare) -> tuple[Any, int]:
        left, left_weight = self.eval(node.left)
        result: Any = True
        for op, comparator in zip(node.ops, node.comparators):
            if type(op) not in _COMPARE:
                raise DecodeError(f"cannot evaluate {type(op).__name__} without eval")
            right, right_weight = self.eval(comparator)
            self.charge(left_weight + right_weight)
            result = _COMPARE[type(op)](left, right)
            if not result:
                break
            left, left_weight = right, right_weight
        return result, _scalar_weight(result) or 1

    def display(self, node: ast.List | ast.Tuple | ast.Set) -> tuple[Any, int]:
        items: list[Any] = []
        weight = 1
        for element in node.elts:
            if isinstance(element, ast.Starred):
                value, value_weight = self.eval(element.value)
                items.extend(value)
                weight += value_weight  # an upper bound: the unpacked container's own weight
            else:
                value, value_weight = self.eval(element)
                items.append(value)
                weight += value_weight
            if weight > MAX_WEIGHT:
                raise DecodeError("expression value too large")
        if isinstance(node, ast.List):
            return items, weight
        if isinstance(node, ast.Tuple):
            return tuple(items), weight
        self.charge(weight)
        return set(items), weight

    def mapping(self, node: ast.Dict) -> tuple[Any, int]:
        result: dict[Any, Any] = {}
        weight = 1  # an upper bound: later duplicate keys replace earlier entries
        for key_node, value_node in zip(node.keys, node.values):
            if key_node is None:  # {**other}
                value, value_weight = self.eval(value_node)
                if not isinstance(value, dict):
                    raise DecodeError(f"'{type(value).__name__}' object is not a mapping")
                result.update(value)
            else:
                key, key_weight = self.eval(key_node)
                value, value_weight = self.eval(value_node)
                self.charge(key_weight)
                result[key] = value
                value_weight += key_weight
            weight += value_weight
            if weight > MAX_WEIGHT:
                raise DecodeError("expression value too large")
        return result, weight

    def subscript(self, node: ast.Subscript) -> tuple[Any, int]:
        container, weight = self.eval(node.value)
        if isinstance(node.slice, ast.Slice):
            parts = [self.eval(part)[0] if part is not None else None
                     for part in (node.slice.lower, node.slice.upper, node.slice.step)]
            index: Any = slice(*parts)
        else:
            index, _ = self.eval(node.slice)
        self.charge(weight)
        result = container[index]
        scalar = _scalar_weight(result)
        return result, scalar if scalar is not None else self.measure(result)
