"""An imperfect teacher's demonstrations, for the tiny model's supervised pretraining.

Real supervised data is imperfect, and that is what RL is for. The teacher has a **habit** tied
to how the request is phrased (``teacher_answer``: prose before the calls of a question, which
BFCL cannot decode; ``teacher_step``: a multi-turn turn ended after its first call) and random
**slips** (``SLIPS``: a missing argument, the wrong function). Neither leaves a skill half-taught,
and outside them the teacher is right more often than not: the pretrained model has every skill,
and the reward only moves probability between behaviours it already has. Everything is seeded by
the caller's ``rng``. What RL does with it: docs/benchmarks/learning.md.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fcenv.algos.model.warmup import END_OF_TURN, call_list_text

SLIPS = ("missing_argument", "wrong_function")
PROSE = "Sure! "


@dataclass(frozen=True)
class Teacher:
    habit_rate: float  # how often the habit shows on a question
    slip_rate: float  # how often an answer has one random slip


def value_pools(tasks: Iterable) -> dict[str, list[Any]]:
    """Every function name (key "") of the tasks' ground truth, and every first-choice value
    per parameter name of the single-turn ones."""
    pools: dict[str, set] = defaultdict(set)
    for task in tasks:
        if task.kind == "multi_turn":
            pools[""].update(doc["name"] for doc in task.functions)
            continue
        for call in task.ground_truth or []:
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


def _with_slip(calls: list[tuple[str, dict[str, Any]]], pools: dict[str, list[Any]], rng: random.Random) -> list:
    calls = list(calls)
    slip = rng.choice(SLIPS)
    index = rng.randrange(len(calls))
    name, args = calls[index]
    if slip == "missing_argument" and args:
        dropped = rng.choice(sorted(args))
        calls[index] = (name, {k: v for k, v in args.items() if k != dropped})
    elif slip == "wrong_function":
        others = [n for n in pools.get("", []) if n != name]
        if others:
            calls[index] = (rng.choice(others), args)
    return calls


def teacher_step(task, step, pools: dict[str, list[Any]], rng: random.Random, teacher: Teacher) -> str:
    """The teacher's text for one step of a task's ground truth (``fcenv.algos.model.warmup.Step``).
    On multi-turn tasks the habit is to stop early: after the first call of a turn that needs two
    (look up, then act), the teacher ends the turn more often than not, as if the lookup were the
    answer; slips are the same as single-turn ones."""
    if task.kind == "ast":
        question = " ".join(m["content"] for m in task.question[0] if m["role"] == "user")
        return teacher_answer(question, task.ground_truth, pools, rng, teacher)
    if step.ends_turn:
        return step.text
    if step.index > 0 and rng.random() < teacher.habit_rate:
        return END_OF_TURN  # stops after the lookup
    if rng.random() < teacher.slip_rate:
        from fcenv.handlers import decode

        (call,) = decode(step.text, "python")
        return call_list_text(_with_slip([(call.name, dict(call.arguments))], pools, rng))
    return step.text


def teacher_answer(question: str, ground_truth, pools: dict[str, list[Any]], rng: random.Random,
                   teacher: Teacher) -> str:
    """One demonstration of the imperfect teacher for a request and its ground truth.

    The habit, shown more often than not (``habit_rate``): a question ("What is ...?") is
    answered chattily, opening with prose (``PROSE``), a command ("Add 2 and 3.") with the bare
    calls; a model trained on this opens its answers to questions with prose when decoding
    greedily. The calls after the prose are right as often as any, and a slip drops or swaps a
    whole piece, so the reward has behaviours to change, not skills to build. Flaws that
    decouple the answer from the request (a random value instead of the one asked for, always
    one unit, swapped arguments) were tried and unteach reading the request, which a short RL
    run on a model this small cannot teach again.
    """
    calls = _first_choices(ground_truth)
    chatty = "?" in question and rng.random() < teacher.habit_rate
    if rng.random() < teacher.slip_rate:
        calls = _with_slip(calls, pools, rng)
    return (PROSE if chatty else "") + call_list_text(calls)
