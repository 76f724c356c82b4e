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


# ---------------------------------------------------------------------------- perturbations

PROSE = "I have completed the request."
GARBAGE = ["Let me think about this.", "[", "```python\nls()\n```", "[f(x={})]", ""]


def _alter_value(value, rng):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice([1, -1, 10])
    if isinstance(value, float):
        return round(value * 1.5 + 1, 2)
    if isinstance(value, str):
        return rng.choice([value + "x", value.upper(), value[:-1], "", value.replace(" ", "_")])
    if isinstance(value, list):
        return value[:-1] if value else ["extra"]
    if isinstance(value, dict):
        return {**value, "extra": 1}
    return value


def _render(name: str, kwargs: dict) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"


def _keyword_calls(task) -> list[list[tuple[str, dict]]]:
    turns = []
    for calls in task.ground_truth:
        parsed = []
        for text in calls:
            name, _, _ = parse_call_text(text)
            _, _, kwargs = parse_call_text(keyword_call(text, task.involved_classes))
            parsed.append((name, kwargs))
        turns.append(parsed)
    return turns


def _steps(turns: list[list[tuple[str, dict]]], split: bool, rng) -> list[list[str]]:
    out = []
    for calls in turns:
        if not calls:
            out.append([PROSE])
        elif split:
            out.append([f"[{_render(n, k)}]" for n, k in calls] + [PROSE])
        else:
            out.append(["[" + ", ".join(_render(n, k) for n, k in calls) + "]", PROSE])
    return out


def perturbed_trajectories(task, rng, count: int) -> list[tuple[str, list[list[str]]]]:
    """``count`` (name, step texts per turn) variants of the ground truth, chosen with ``rng``."""
    base = _keyword_calls(task)
    methods = sorted({f["name"] for f in task.functions} | {f["name"] for d in task.missed_functions.values() for f in d})
    nonempty = [i for i, calls in enumerate(base) if calls]
    variants = []

    def pick_call():
        turn = rng.choice(nonempty)
        return turn, rng.randrange(len(base[turn]))

    for _ in range(count):
        kind = rng.choice(["split", "drop", "duplicate", "reorder", "alter", "wrong_name", "positional",
                           "prose_turn", "force_terminated", "extra_call", "wrong_turn", "garbage", "missing_arg"])
        turns = [list(calls) for calls in base]
        split = rng.random() < 0.5
        steps = None
        if kind == "split":
            split = True
        elif kind == "drop" and nonempty:
            t, i = pick_call()
            del turns[t][i]
        elif kind == "duplicate" and nonempty:
            t, i = pick_call()
            turns[t].insert(i, turns[t][i])
        elif kind == "reorder" and nonempty:
            rng.shuffle(turns[rng.choice(nonempty)])
        elif kind in ("alter", "missing_arg") and nonempty:
            t, i = pick_call()
            name, kwargs = turns[t][i]
            if kwargs:
                key = rng.choice(sorted(kwargs))
                kwargs = dict(kwargs)
                if kind == "alter":
                    kwargs[key] = _alter_value(kwargs[key], rng)
                else:
                    del kwargs[key]
                turns[t][i] = (name, kwargs)
        elif kind == "wrong_name" and nonempty:
            t, i = pick_call()
            name, kwargs = turns[t][i]
            turns[t][i] = (rng.choice([name + "s", name[:-1], name.upper(), "os." + name]), kwargs)
        elif kind == "extra_call":
            t = rng.randrange(len(turns))
            turns[t].insert(rng.randrange(len(turns[t]) + 1), (rng.choice(methods), {}))
        elif kind == "wrong_turn" and len(turns) > 1 and nonempty:
            t, i = pick_call()
            target = min(t + 1, len(turns) - 1) if t + 1 < len(turns) else t - 1
            turns[target].append(turns[t].pop(i))
        steps = _steps(turns, split, rng)
        if kind == "positional" and nonempty:
            t = rng.choice(nonempty)
            steps[t] = ["[" + ", ".join(f"{n}({', '.join(repr(v) for v in k.values())})" for n, k in base[t]) + "]", PROSE]
        elif kind == "prose_turn":
            steps[rng.randrange(len(steps))] = [PROSE]
        elif kind == "force_terminated" and len(steps) > 1:
            steps = steps[: rng.randrange(1, len(steps))]
        elif kind == "garbage":
            t = rng.randrange(len(steps))
            steps[t].insert(rng.randrange(len(steps[t])), rng.choice(GARBAGE))
        variants.append((kind, steps))
    return variants
