"""Canonical JSON form of a backend instance's public state (standard library only).

Imported both by our tests and by ``bfcl_driver.py`` inside the oracle venv, so the two
sides serialise state the same way. Public means what BFCL's state check compares:
attributes whose names do not start with ``_``. Objects inside the state (files,
directories) are written as their class name plus their own public attributes; a
reference back to an object already being written (a parent directory) is cut.
"""

from __future__ import annotations

import math


def public_state(instance) -> dict:
    return {k: canonical(v) for k, v in sorted(vars(instance).items()) if not k.startswith("_")}


def canonical(value, _active=None):
    active = _active if _active is not None else set()
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if value is Ellipsis:
        return {"__python__": "Ellipsis"}
    if isinstance(value, (list, tuple)):
        items = [canonical(v, active) for v in value]
        return items if isinstance(value, list) else {"__tuple__": items}
    if isinstance(value, (set, frozenset)):
        return {"__set__": sorted((canonical(v, active) for v in value), key=repr)}
    if isinstance(value, dict):
        # BFCL compares state with ==, which ignores dict order; so does this form.
        pairs = [[canonical(k, active), canonical(v, active)] for k, v in value.items()]
        return {"__dict__": sorted(pairs, key=lambda kv: repr(kv[0]))}
    if id(value) in active:
        return {"__cycle__": type(value).__name__}
    if hasattr(value, "__dict__"):
        active.add(id(value))
        try:
            attrs = {k: canonical(v, active) for k, v in sorted(vars(value).items()) if not k.startswith("_")}
        finally:
            active.discard(id(value))
        return {"__object__": type(value).__name__, "attrs": attrs}
    return {"__repr__": repr(value)}
