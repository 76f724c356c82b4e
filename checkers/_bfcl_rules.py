"""BFCL's per-parameter rules: type resolution, the type checker and the value comparators.

Each rule raises ``Failure`` carrying BFCL's ``error_type`` and message; the callers in
``fcenv.checkers.ast_checker`` apply them in BFCL's order and stop at the first failure. Kept apart
from the dispatch so the reward facets can run the same rules one parameter at a time.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fcenv.checkers.java_values import java_to_value
from fcenv.checkers.js_values import js_to_value

PYTHON_TYPES: dict[str, type] = {
    "string": str, "integer": int, "float": float, "boolean": bool,
    "array": list, "tuple": list, "dict": dict, "any": str,
}
JAVA_TYPES: dict[str, type] = {
    "byte": int, "short": int, "integer": int, "float": float, "double": float, "long": int,
    "boolean": bool, "char": str, "Array": list, "ArrayList": list, "Set": set, "HashMap": dict,
    "Hashtable": dict, "Queue": list, "Stack": list, "String": str, "any": str,
}
JS_TYPES: dict[str, type] = {
    "String": str, "integer": int, "float": float, "Bigint": int, "Boolean": bool,
    "dict": dict, "array": list, "any": str,
}
_PYTHON_NESTED = ("array", "tuple")
_CONVERTED_NESTED = ("Array", "ArrayList", "array")
_DROPPED = str.maketrans("", "", " ,./-_*^")


class Failure(Exception):
    """One failed BFCL rule: ``error_type`` plus the messages BFCL reports."""

    def __init__(self, error_type: str, errors: list[Any]):
        super().__init__(error_type)
        self.error_type = error_type
        self.errors = errors


def standardize_string(text: str) -> str:
    """BFCL's normalisation: drop `` ,./-_*^``, lowercase, and read ``'`` as ``"``."""
    # The same answer strings are normalised again and again; long model strings are not
    # worth keeping.
    return _standardize_short(text) if len(text) <= 256 else _standardize(text)


def _standardize(text: str) -> str:
    return text.translate(_DROPPED).lower().replace("'", '"')


_standardize_short = lru_cache(maxsize=8192)(_standardize)


def resolve_type(param: str, value: Any, details: dict, language: str) -> tuple[Any, type, type | None]:
    """The value as BFCL compares it, its expected Python type and the nested element type.

    Java and JavaScript values must be source strings, converted here by the declared type.
    An unknown type raises ``KeyError`` and an unconvertible one whatever BFCL's converter
    raises; BFCL's runner crashes on both, and the checker reports them as checker errors.
    """
    declared = details["type"]
    nested: type | None = None
    if language == "python":
        expected = PYTHON_TYPES[declared]
        if declared in _PYTHON_NESTED:
            nested = PYTHON_TYPES[details["items"]["type"]]
        if declared == "tuple" and type(value) is tuple:
            value = list(value)
        if declared == "float" and type(value) is int:
            value = float(value)  # BFCL's only coercion: a top-level Python int for a float
        return value, expected, nested
    table, convert, tag = (JAVA_TYPES, java_to_value, "java") if language == "java" else (JS_TYPES, js_to_value, "js")
    expected = table[declared]
    if type(value) is not str:
        raise Failure(f"type_error:{tag}", [
            f"Incorrect type for parameter {param!r}. Expected type String, got {type(value).__name__}. "
            f"Parameter value: {value!r}."
        ])
    if declared in _CONVERTED_NESTED:
        item_type = details["items"]["type"]
        nested = table[item_type]
        value = convert(value, declared, item_type)
    else:
        value = convert(value, declared)
    return value, expected, nested


def _answer_type(acceptable: list) -> type | None:
    for item in acceptable:
        if item != "":
            return type(item)
    return None


def check_type(param: str, value: Any, acceptable: list, declared: str, expected: type, nested: type | None) -> bool:
    """BFCL's ``type_checker``; returns ``is_variable`` (the answer holds a variable name).

    Types are compared with ``type() ==``, so bool is not int. When the answer's own type
    differs from the declared one, the answer is a variable name and a value of the answer's
    type passes; the later value check is then an exact ``in``.
    """
    answer_type = _answer_type(acceptable)
    is_variable = answer_type is not None and answer_type != expected
    if type(value) == expected:
        if nested is None:
            return is_variable
        for candidate in acceptable:
            if type(candidate) != list:
                return is_variable
            # Each element as BFCL checks it against the candidate (the rule above without
            # nesting): of the nested type, or of the candidate's own element type.
            element_type = _answer_type(candidate)
            if all(type(item) == nested or type(item) == element_type for item in value):
                return is_variable
        raise Failure("type_error:nested", [
            f"Nested type checking failed for parameter {param!r}. Expected outer type {declared} with "
            f"inner type {nested}. Parameter value: {value!r}."
        ])
    if answer_type is not None and type(value) == answer_type:
        return True
    raise Failure("type_error:simple", [
        f"Incorrect type for parameter {param!r}. Expected type {declared}, got {type(value).__name__}. "
        f"Parameter value: {value!r}."
    ])


def check_value(param: str, value: Any, acceptable: list, expected: type, nested: type | None, is_variable: bool) -> None:
    """BFCL's value rules: comparator by type, else exact membership."""
    if not is_variable:
        if expected is dict:
            return check_dict(value, acceptable)
        if expected is list and nested is dict:
            return check_list_of_dicts(value, acceptable)
        if expected is str:
            return check_string(param, value, acceptable)
        if expected is list:
            return check_list(param, value, acceptable)
    if value not in acceptable:
        raise Failure("value_error:others", [
            f"Invalid value for parameter {param!r}: {value!r}. Expected one of {acceptable}."
        ])


def check_string(param: str, value: str, acceptable: list) -> None:
    if value in acceptable:
        return  # equal strings normalise alike: most answers pass here, with nothing to build
    wanted = [standardize_string(item) for item in acceptable if type(item) is str]
    if standardize_string(value) not in wanted:
        raise Failure("value_error:string", [
            f"Invalid value for parameter {param!r}: {value!r}. Expected one of {acceptable}. Case insensitive."
        ])


def _standardize_items(items: Any) -> list:
    return [standardize_string(item) if type(item) is str else item for item in items]


def check_list(param: str, value: list, acceptable: list) -> None:
    """Order-sensitive; only top-level strings are normalised."""
    if value in acceptable:
        return  # equal lists normalise alike
    if _standardize_items(value) not in [_standardize_items(candidate) for candidate in acceptable]:
        raise Failure("value_error:list/tuple", [
            f"Invalid value for parameter {param!r}: {value!r}. Expected one of {acceptable}."
        ])


def check_dict(value: dict, acceptable: list) -> None:
    """One level deep: keys must be known, values acceptable, omitted keys optional ("")."""
    failure = Failure("dict_checker:unclear", [])
    for candidate in acceptable:
        if candidate == "":
            continue
        failure = _dict_failure(value, candidate)
        if failure is None:
            return
    raise failure


def _dict_failure(value: dict, candidate: dict) -> Failure | None:
    # BFCL runs both loops even when the first fails: a missing key then overrides the type.
    failure = None
    for key, item in value.items():
        if key not in candidate:
            failure = Failure("value_error:dict_key", [f"Unexpected dict key parameter: '{key}'."])
            break
        wanted = _standardize_items(candidate[key])
        if (standardize_string(item) if type(item) is str else item) not in wanted:
            failure = Failure("value_error:dict_value", [
                f"Invalid value for parameter {key!r}: {item!r}. Expected one of {wanted}."
            ])
            break
    for key, allowed in candidate.items():
        if key not in value and "" not in allowed:
            errors = (failure.errors if failure else []) + [f"Missing dict key parameter: '{key}'."]
            failure = Failure("value_error:dict_key", errors)
            break
    return failure


def check_list_of_dicts(value: list, acceptable: list) -> None:
    """Same length and order as some candidate, each element passing ``check_dict``."""
    failure = Failure("list_dict_checker:unclear", [])
    for candidate in acceptable:
        if len(value) != len(candidate):
            failure = Failure("value_error:list_dict_count", ["Wrong number of dictionaries in the list."])
            continue
        for i, item in enumerate(value):
            try:
                check_dict(item, [candidate[i]])
            except Failure as exc:
                failure = exc
                break
        else:
            return
    raise failure
