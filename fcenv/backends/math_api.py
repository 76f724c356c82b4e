"""MathAPI: stateless arithmetic, statistics and unit conversions.

Behaviour mirrors BFCL's class of the same name, learned by running it. Two things differ in
how, not in what the caller sees:

* BFCL sets the process-wide ``mpmath.mp.dps`` and decimal context precision to the call's
  ``precision`` and leaves them there, so the result prints with that many digits. We compute
  in local contexts and return numbers whose ``repr`` was fixed inside that context, which
  prints the same without touching global state.
* Work that would be unbounded is refused (see the ``_MAX_*`` limits); BFCL would grind on.
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal, InvalidOperation

import mpmath

# Factors to metres; the only units BFCL's si_unit_conversion accepts.
_METRES_PER_UNIT = {"km": 1e3, "m": 1.0, "cm": 1e-2, "mm": 1e-3, "um": 1e-6, "nm": 1e-9}
# Multipliers of BFCL's imperial_si_conversion (derived by probing it).
_IMPERIAL_FACTORS = {
    ("cm", "in"): 0.393701,
    ("in", "cm"): 2.54,
    ("kg", "lb"): 2.20462,
    ("lb", "kg"): 0.453592,
    ("km", "miles"): 0.621371,
    ("miles", "km"): 1.60934,
    ("m", "ft"): 3.28084,
    ("ft", "m"): 0.3048,
    ("m", "yd"): 1.09361,
    ("yd", "m"): 0.9144,
}
# Beyond these, BFCL either fails at once (MemoryError, for precisions near 10**12) or
# computes for minutes to hours; we answer at once as its quick failure does.
_MAX_LOG_DIGITS = 10_000
_MAX_SQRT_DIGITS = 100_000
# Python refuses to print ints longer than this (sys.get_int_max_str_digits default), so a
# bigger power could never reach the model as text anyway.
_MAX_INT_POWER_DIGITS = 4300
_INT_TOO_LONG = (
    "Exceeds the limit (4300 digits) for integer string conversion; "
    "use sys.set_int_max_str_digits() to increase the limit"
)


class _FrozenMpf(mpmath.mpf):
    """An mpf that prints as it did at the precision it was computed with."""

    __slots__ = ("_text",)

    def __repr__(self) -> str:
        return self._text


class _FrozenMpc(mpmath.mpc):
    __slots__ = ("_text",)

    def __repr__(self) -> str:
        return self._text


def _freeze(value):
    frozen_type = _FrozenMpc if isinstance(value, mpmath.mpc) else _FrozenMpf
    frozen = frozen_type(value)
    frozen._text = repr(value)
    return frozen


def _is_number(value) -> bool:
    return isinstance(value, (int, float))


def _rounds_int_to_zero(number, decimal_places) -> bool:
    if (
        not isinstance(number, int)
        or not isinstance(decimal_places, int)
        or decimal_places > -10_000
    ):
        return False
    # |number| < 10**digits <= 10**-decimal_places / 2, so round() would give 0.
    return -decimal_places > len(str(abs(int(number)))) + 1


def _printable(value):
    """Python refuses to print ints past its digit limit; raise that error here, where the
    caller still handles it, rather than when the result is turned into text."""
    if isinstance(value, int) and value.bit_length() > 14_000:
        str(value)
    return value


def _int_power_too_long(base, exponent) -> bool:
    if type(base) is not int or type(exponent) is not int or exponent <= 0 or abs(base) <= 1:
        return False
    # Stay exact near the limit: only refuse when the result is clearly beyond it.
    return exponent * math.log10(abs(base)) > _MAX_INT_POWER_DIGITS + 10


def _exact_log(x):
    """log(x) where it needs no digits (0, 1, infinities, nan); else BFCL's quick MemoryError."""
    if x == 0:
        return mpmath.mpf("-inf")
    if x == 1:
        return mpmath.mpf(0)
    if x == mpmath.inf:
        return mpmath.mpf("inf")
    if mpmath.isnan(x):
        return mpmath.mpf("nan")
    raise MemoryError()


def _exact_sqrt_or_fail(number: Decimal) -> Decimal:
    """A square root at a precision too big to compute: exact roots come out the same at any
    precision (BFCL returns them quickly), anything else fails as BFCL's quick failure does."""
    context = decimal.Context(prec=_MAX_SQRT_DIGITS, traps=[])
    root = number.sqrt(context)
    if context.flags[decimal.Inexact]:
        raise MemoryError()
    return root


class MathAPI:
    def __init__(self):
        self._api_description = (
            "This tool belongs to the Math API, which provides various mathematical operations."
        )

    def logarithm(self, value: float, base: float, precision: int) -> dict[str, float]:
        try:
            # int() is how mpmath reads a precision, so odd ones fail here with its message.
            if int(precision) > _MAX_LOG_DIGITS:
                ratio = _exact_log(mpmath.mp.convert(value)) / _exact_log(mpmath.mp.convert(base))
                return {"result": _freeze(ratio)}
            with mpmath.workdps(precision):
                result = mpmath.log(value) / mpmath.log(base)
                return {"result": _freeze(result)}
        except Exception as exc:  # noqa: BLE001 - BFCL reports any failure as its message
            return {"error": str(exc)}

    def mean(self, numbers: list[float]) -> dict[str, float]:
        if not numbers:
            return {"error": "Cannot calculate mean of an empty list"}
        try:
            return {"result": sum(numbers) / len(numbers)}
        except TypeError:
            return {"error": "All elements in the list must be numbers"}

    def standard_deviation(self, numbers: list[float]) -> dict[str, float]:
        if not numbers:
            return {"error": "Cannot calculate standard deviation of an empty list"}
        try:
            average = sum(numbers) / len(numbers)
            variance = sum((x - average) ** 2 for x in numbers) / len(numbers)
            return {"result": math.sqrt(variance)}
        except TypeError:
            return {"error": "All elements in the list must be numbers"}

    def si_unit_conversion(self, value: float, unit_in: str, unit_out: str) -> dict[str, float]:
        if not _is_number(value):
            return {"error": "Value must be a number"}
        if unit_in not in _METRES_PER_UNIT or unit_out not in _METRES_PER_UNIT:
            return {"error": f"Conversion from '{unit_in}' to '{unit_out}' is not supported"}
        return {"result": value * _METRES_PER_UNIT[unit_in] * (1 / _METRES_PER_UNIT[unit_out])}

    def imperial_si_conversion(self, value: float, unit_in: str, unit_out: str) -> dict[str, float]:
        if not _is_number(value):
            return {"error": "Value must be a number"}
        if unit_in == unit_out:
            return {"result": value}
        if unit_in == "celsius" and unit_out == "fahrenheit":
            return {"result": value * (9 / 5) + 32}
        if unit_in == "fahrenheit" and unit_out == "celsius":
            return {"result": (value - 32) * (5 / 9)}
        try:
            factor = _IMPERIAL_FACTORS[(unit_in, unit_out)]
        except (KeyError, TypeError):
            return {"error": f"Conversion from '{unit_in}' to '{unit_out}' is not supported"}
        return {"result": value * factor}

    def add(self, a: float, b: float) -> dict[str, float]:
        try:
            return {"result": _printable(a + b)}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def subtract(self, a: float, b: float) -> dict[str, float]:
        try:
            return {"result": _printable(a - b)}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def multiply(self, a: float, b: float) -> dict[str, float]:
        if not _is_number(a) or not _is_number(b):
            return {"error": "Both inputs must be numbers"}
        return {"result": _printable(a * b)}

    def divide(self, a: float, b: float) -> dict[str, float]:
        if b == 0:
            return {"error": "Cannot divide by zero"}
        try:
            return {"result": a / b}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def power(self, base: float, exponent: float) -> dict[str, float]:
        if _int_power_too_long(base, exponent):
            raise ValueError(_INT_TOO_LONG)
        try:
            return {"result": _printable(base**exponent)}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def square_root(self, number: float, precision: int) -> dict[str, float]:
        try:
            if number < 0:
                return {"error": "Cannot calculate square root of a negative number"}
            context = decimal.Context()
            context.prec = precision
            if context.prec > _MAX_SQRT_DIGITS:
                return {"result": _exact_sqrt_or_fail(Decimal(number))}
            return {"result": Decimal(number).sqrt(context)}
        except (TypeError, InvalidOperation):
            return {
                "error": "Input must be a number or computation resulted in an invalid operation"
            }

    def absolute_value(self, number: float) -> dict[str, float]:
        try:
            return {"result": abs(number)}
        except TypeError:
            return {"error": "Input must be a number"}

    def round_number(self, number: float, decimal_places: int = 0) -> dict[str, float]:
        if _rounds_int_to_zero(number, decimal_places):
            return {"result": 0}  # what round() gives, without building 10**-decimal_places
        try:
            return {"result": round(number, decimal_places)}
        except TypeError:
            return {"error": "First input must be a number, second input must be an integer"}

    def percentage(self, part: float, whole: float) -> dict[str, float]:
        if whole == 0:
            return {"error": "Whole value cannot be zero"}
        try:
            return {"result": (part / whole) * 100}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def min_value(self, numbers: list[float]) -> dict[str, float]:
        if not numbers:
            return {"error": "Cannot find minimum of an empty list"}
        try:
            return {"result": min(numbers)}
        except TypeError:
            return {"error": "All elements in the list must be numbers"}

    def max_value(self, numbers: list[float]) -> dict[str, float]:
        if not numbers:
            return {"error": "Cannot find maximum of an empty list"}
        try:
            return {"result": max(numbers)}
        except TypeError:
            return {"error": "All elements in the list must be numbers"}

    def sum_values(self, numbers: list[float]) -> dict[str, float]:
        if not numbers:
            return {"error": "Cannot calculate sum of an empty list"}
        try:
            return {"result": _printable(sum(numbers))}
        except TypeError:
            return {"error": "All elements in the list must be numbers"}
