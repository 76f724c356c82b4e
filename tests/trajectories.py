"""Model outputs built from BFCL's multi-turn ground truth, for tests and benchmarks.

Ground-truth strings may pass arguments by position (``sort('a.txt')``), which BFCL's model
decoder drops; a model answer names them. ``keyword_call`` binds them to the parameter names
of our backend methods.
"""

from __future__ import annotations

import inspect
from functools import lru_cache

from fcenv.backends import backend_class
from fcenv.multi_turn.executor import parse_call_text


@lru_cache(maxsize=None)
def _signatures(classes: tuple[str, ...]) -> dict[str, inspect.Signature]:
    routes = {}
    for name in classes:
        for method, fn in inspect.getmembers(backend_class(name), inspect.isfunction):
            if not method.startswith("_"):
                routes[method] = inspect.signature(fn)
    return routes


def keyword_call(text: str, classes: list[str]) -> str:
    name, args, kwargs = parse_call_text(text)
    if args:
        signature = _signatures(tuple(classes)).get(name)
        if signature is not None:
            bound = signature.bind_partial(None, *args, **kwargs)  # None stands for self
            kwargs = {k: v for k, v in bound.arguments.items() if k != "self"}
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"


def ground_truth_steps(task) -> list[list[str]]:
    """One step per turn holding all its calls, then a prose step that ends the turn."""
    turns = []
    for calls in task.ground_truth:
        steps = []
        if calls:
            steps.append("[" + ", ".join(keyword_call(c, task.involved_classes) for c in calls) + "]")
        steps.append("I have completed the request.")
        turns.append(steps)
    return turns
