"""Exact JSON form of decoded values (standard library only).

Used on both sides of the decoder parity tests, in our process and in the oracle venv's
(``bfcl_driver.py``), so that values compare with their types: 1, 1.0 and True stay apart.
"""

from __future__ import annotations

import json


def typed(value):
    """An exact, JSON-safe form of a decoded value: every type is kept apart (int, float,
    bool, tuple, list, bytes, sets...), dict keys keep their type and order."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return {"int": hex(value)}
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, complex):
        return {"complex": repr(value)}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, tuple):
        return {"tuple": [typed(v) for v in value]}
    if isinstance(value, list):
        return [typed(v) for v in value]
    if isinstance(value, dict):
        return {"dict": [[typed(k), typed(v)] for k, v in value.items()]}
    if isinstance(value, (set, frozenset)):
        return {"set": sorted(json.dumps(typed(v), sort_keys=True) for v in value)}
    if value is Ellipsis:
        return {"ellipsis": True}
    return {"repr": repr(value)}
