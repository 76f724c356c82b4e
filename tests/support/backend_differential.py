"""Run the same direct method calls on our backends and on the reference's, for differential tests.

``run_ours`` mirrors the oracle driver's ``execute`` op on our classes: a fresh
``ToolSession`` (scenario loaded from a deep copy of ``initial_config``, calls routed by method
name, last involved class winning), direct method calls, BFCL's result strings.
"""

from __future__ import annotations

import copy
from typing import Any

from fcenv.multi_turn.executor import ERROR_PREFIX, ToolSession, parse_call_text, result_string
from harness.oracle import to_jsonable
from harness.oracle.state import public_state


def parse_call(text: str) -> dict[str, Any]:
    """A ground-truth call string such as ``sort('a.txt')`` as {name, args, kwargs} literals."""
    name, args, kwargs = copy.deepcopy(parse_call_text(text))  # the parse is cached and shared
    return {"name": name, "args": list(args), "kwargs": dict(kwargs)}


def run_ours(involved_classes, initial_config, calls, long_context=False) -> dict[str, Any]:
    session = ToolSession(list(involved_classes), initial_config, long_context)
    results = []
    for call in calls:
        instance = session.routes.get(call["name"])
        if instance is None:
            results.append(f"{ERROR_PREFIX}name '{call['name']}' is not defined")
            continue
        try:
            results.append(result_string(getattr(instance, call["name"])(*call.get("args", []), **call.get("kwargs", {}))))
        except Exception as exc:
            results.append(f"{ERROR_PREFIX}{exc}")
    return {"results": results, "states": {n: public_state(i) for n, i in session.instances.items()}}


def execute_request(involved_classes, initial_config, calls, long_context=False) -> dict[str, Any]:
    """The oracle request for the same run."""
    return {
        "op": "execute",
        "involved_classes": list(involved_classes),
        "initial_config": initial_config,
        "calls": [{**c, "args": to_jsonable(c.get("args", [])), "kwargs": to_jsonable(c.get("kwargs", {}))} for c in calls],
        "long_context": long_context,
    }
