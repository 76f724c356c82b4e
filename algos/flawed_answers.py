"""Flawed demonstrations for the tiny model's supervised pretraining.

Real supervised data is imperfect, and that is what RL is for. The tiny model is pretrained
on every training prompt with its ground truth and with answers that each have one typical
flaw (prose before the calls, a wrong value, a missing argument or a wrong function). It
learns the skills (the format, which function, copying values) and also a habit of making
those mistakes, a habit RL can remove within minutes on a CPU because it only has to shift
probability between behaviours the model already has.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from algos.warmup import call_list_text

FLAWS = ("prose", "wrong_value", "missing_argument", "wrong_function")


def value_pools(ground_truths: Iterable[list[dict[str, dict[str, list[Any]]]]]) -> dict[str, list[Any]]:
    """Every first-choice value seen per parameter name, and every function name (key "")."""
    pools: dict[str, set] = defaultdict(set)
    for calls in ground_truths:
        for call in calls:
            for name, params in call.items():
                pools[""].add(name)
                for key, choices in params.items():
                    if choices and choices[0] != "":
                        pools[key].add(choices[0])
    return {key: sorted(values, key=repr) for key, values in pools.items()}


def _first_choices(ground_truth) -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for call in ground_truth:
        for name, params in call.items():
            calls.append((name, {k: v[0] for k, v in params.items() if v and v[0] != ""}))
    return calls


def flawed_answer(ground_truth, pools: dict[str, list[Any]], rng: random.Random) -> str:
    calls = _first_choices(ground_truth)
    flaw = rng.choice(FLAWS)
    index = rng.randrange(len(calls))
    name, args = calls[index]
    if flaw == "wrong_value" and args:
        key = rng.choice(sorted(args))
        others = [v for v in pools.get(key, []) if v != args[key]]
        if others:
            calls[index] = (name, {**args, key: rng.choice(others)})
            return call_list_text(calls)
    if flaw == "missing_argument" and args:
        dropped = rng.choice(sorted(args))
        calls[index] = (name, {k: v for k, v in args.items() if k != dropped})
        return call_list_text(calls)
    if flaw == "wrong_function":
        others = [n for n in pools.get("", []) if n != name]
        if others:
            calls[index] = (rng.choice(others), args)
            return call_list_text(calls)
    return "Sure! " + call_list_text(calls)
