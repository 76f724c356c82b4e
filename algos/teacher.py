"""An imperfect teacher's demonstrations, for the tiny model's supervised pretraining.

Real supervised data is imperfect, and that is what RL is for. The tiny model is pretrained on
several demonstrations per training prompt, written by a teacher with two kinds of flaws:

- **habits**, tied to what is asked, that the teacher shows more often than not: it opens with
  prose for the chat-like functions ("Sure! [...]", which BFCL cannot decode), answers only the
  first request of a parallel question, reads every weather question as celsius, and swaps the
  two currencies of a conversion. A model trained on this data makes these mistakes greedily;
- **slips**, spread at random over every answer: a wrong value, a missing argument or the
  wrong function.

Outside its habits the teacher is right more often than not, so the pretrained model has every
skill (the format, which function, copying values), and the reward only has to move
probability between behaviours it already has. Everything here is seeded by the caller's
``rng``.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from algos.warmup import call_list_text

SLIPS = ("wrong_value", "missing_argument", "wrong_function")
CHATTY_FUNCTIONS = ("translate_text", "send_message")
PROSE = "Sure! "


@dataclass(frozen=True)
class Teacher:
    habit_rate: float = 0.6  # how often a habit shows where it applies
    slip_rate: float = 0.3  # how often an answer has one random slip


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


def _habit(calls: list[tuple[str, dict[str, Any]]]) -> str | None:
    """The habit that applies to an answer, if any (at most one does)."""
    name = calls[0][0]
    if len(calls) > 1:
        return "first_request_only"
    if name in CHATTY_FUNCTIONS:
        return "prose"
    if name == "get_weather" and calls[0][1].get("unit") != "celsius":
        return "celsius"
    if name == "convert_currency":
        return "swapped_currencies"
    return None


def _with_habit(habit: str, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list, str]:
    name, args = calls[0]
    if habit == "first_request_only":
        return calls[:1], ""
    if habit == "celsius":
        return [(name, {**args, "unit": "celsius"})], ""
    if habit == "swapped_currencies":
        return [(name, {**args, "source": args.get("target"), "target": args.get("source")})], ""
    return calls, PROSE


def _with_slip(calls: list[tuple[str, dict[str, Any]]], pools: dict[str, list[Any]], rng: random.Random) -> list:
    calls = list(calls)
    slip = rng.choice(SLIPS)
    index = rng.randrange(len(calls))
    name, args = calls[index]
    if slip == "wrong_value" and args:
        key = rng.choice(sorted(args))
        others = [v for v in pools.get(key, []) if v != args[key]]
        if others:
            calls[index] = (name, {**args, key: rng.choice(others)})
    elif slip == "missing_argument" and args:
        dropped = rng.choice(sorted(args))
        calls[index] = (name, {k: v for k, v in args.items() if k != dropped})
    elif slip == "wrong_function":
        others = [n for n in pools.get("", []) if n != name]
        if others:
            calls[index] = (rng.choice(others), args)
    return calls


def teacher_answer(ground_truth, pools: dict[str, list[Any]], rng: random.Random,
                   teacher: Teacher = Teacher()) -> str:
    """One demonstration of the imperfect teacher for a task's ground truth."""
    calls = _first_choices(ground_truth)
    prefix = ""
    habit = _habit(calls)
    if habit is not None and rng.random() < teacher.habit_rate:
        calls, prefix = _with_habit(habit, calls)
    if rng.random() < teacher.slip_rate:
        calls = _with_slip(calls, pools, rng)
    return prefix + call_list_text(calls)
