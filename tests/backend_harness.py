"""Run the same direct method calls on our backends and on the reference's, for differential tests.

``run_ours`` mirrors the oracle driver's ``execute`` op: fresh instances, the scenario
loaded from a deep copy of ``initial_config``, calls routed by method name (last involved
class wins), return values turned into result strings the way BFCL's executor does.
"""

from __future__ import annotations

import ast
import copy
import inspect
import json
from typing import Any

from fcenv.backends import STATELESS, backend_class
from tests.oracle import to_jsonable
from tests.oracle.state import public_state


def result_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        try:
            return json.dumps(value)
        except Exception:
            return str(value)
    return str(value)


def parse_call(text: str) -> dict[str, Any]:
    """A ground-truth call string such as ``sort('a.txt')`` as {name, args, kwargs} literals."""
    node = ast.parse(text.strip(), mode="eval").body
    assert isinstance(node, ast.Call), text
    return {
        "name": ast.unparse(node.func),
        "args": [ast.literal_eval(a) for a in node.args],
        "kwargs": {k.arg: ast.literal_eval(k.value) for k in node.keywords},
    }


def run_ours(involved_classes, initial_config, calls, long_context=False) -> dict[str, Any]:
    instances = {}
    for name in involved_classes:
        inst = backend_class(name)()
        if name not in STATELESS:
            inst._load_scenario(copy.deepcopy(initial_config.get(name, {})), long_context=long_context)
        instances[name] = inst
    routes = {}
    for inst in instances.values():
        for name, _ in inspect.getmembers(inst, inspect.ismethod):
            if not name.startswith("_"):
                routes[name] = inst
    results = []
    for call in calls:
        inst = routes.get(call["name"])
        if inst is None:
            results.append(f"Error during execution: name '{call['name']}' is not defined")
            continue
        try:
            results.append(result_string(getattr(inst, call["name"])(*call.get("args", []), **call.get("kwargs", {}))))
        except Exception as exc:
            results.append(f"Error during execution: {exc}")
    return {"results": results, "states": {n: public_state(i) for n, i in instances.items()}}


def execute_request(involved_classes, initial_config, calls, long_context=False) -> dict[str, Any]:
    """The oracle request for the same run."""
    return {
        "op": "execute",
        "involved_classes": list(involved_classes),
        "initial_config": initial_config,
        "calls": [{**c, "args": to_jsonable(c.get("args", [])), "kwargs": to_jsonable(c.get("kwargs", {}))} for c in calls],
        "long_context": long_context,
    }
