"""A right answer to a single-turn task, as text."""

from __future__ import annotations


def gt_answer(task) -> str:
    """A correct Python answer: the first acceptable value of every ground-truth argument."""
    calls = []
    for call in task.ground_truth:
        (name, params), = call.items()
        args = ", ".join(f"{k}={v[0]!r}" for k, v in params.items() if v and v[0] != "")
        calls.append(f"{name}({args})")
    return "[" + ", ".join(calls) + "]"
