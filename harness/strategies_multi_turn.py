"""Hypothesis strategies for multi-turn episodes: step texts built from the backends' function
docs, the entry's initial config (real file names, ids, users, ...) and its ground truth, with
near misses and hostile calls; whole episodes; recorded trajectories for the checker.

The generators follow harness/strategies.py: ``gen(r, fuzz, task)``, made a strategy with
``Fuzz.strategy(gen, task)``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fcenv.tasks import Task
from fcenv.handlers.base import MAX_STEP_CALLS, Call, DecodeError
from harness.fuzz_text import (
    HOSTILE_NAMES,
    HUGE_INT,
    INJECTIONS,
    PROSE,
    Choices,
    near_miss,
    py_object,
    wrapped,
)
from harness.strategies import Fuzz, model_text, py_value
from harness.trajectories import ground_truth_steps, keyword_call


def _typed_value(r: Choices, details: dict, strings: Sequence[str], numbers: Sequence[Any]) -> Any:
    """A value for a backend parameter: of its documented type (mostly), from the scenario."""
    kind = details.get("type")
    if r.one_in(6):
        return py_object(r) if r.one_in(2) else r.pick(strings)
    if kind == "string":
        return r.pick(strings) if not r.one_in(4) else r.text()
    if kind == "integer":
        ints = [n for n in numbers if isinstance(n, int)] or [0]
        return r.pick(ints) if r.one_in(2) else r.integer()
    if kind in ("float", "number"):
        return r.pick(numbers) if r.one_in(2) else r.floating()
    if kind == "boolean":
        return r.one_in(2)
    if kind in ("array", "tuple"):
        items = details["items"] if isinstance(details.get("items"), dict) else {"type": "string"}
        return [_typed_value(r, items, strings, numbers) for _ in range(r.number(0, 3))]
    if kind == "dict":
        return {r.pick(strings): r.pick(strings) for _ in range(r.number(0, 3))}
    return py_object(r)


def tool_call(r: Choices, f: Fuzz, task: Task) -> str:
    """One backend call of a multi-turn task: a documented name, typed values from its scenario."""
    if r.one_in(10):
        args = ", ".join(f"a={r.pick(INJECTIONS)}" for _ in range(r.number(0, 2)))
        return f"{r.pick(HOSTILE_NAMES)}({args})"
    doc = r.pick(list(task.functions) + [d for ds in task.missed_functions.values() for d in ds])
    strings = f.corpus.scenario_strings.get(task.id, ("a",))
    numbers = f.corpus.scenario_numbers.get(task.id, (0,))
    params = doc.get("parameters", {})
    props, required = params.get("properties", {}), set(params.get("required", []))
    rendered = [f"{k}={_typed_value(r, props[k], strings, numbers)!r}" for k in sorted(props)
                if (k in required and not r.one_in(10)) or r.one_in(3)]
    if r.one_in(8):
        rendered.append(f"{r.pick(f.corpus.params)}={py_value(r, f)}")
    return f"{doc['name']}({', '.join(rendered)})"


def step_text(r: Choices, f: Fuzz, task: Task) -> str:
    """One multi-turn step: ground-truth calls, typed backend calls, prose, or near misses."""
    how = r.pick(["truth", "truth", "calls", "calls", "prose", "mutated", "other"])
    if how == "prose":
        return r.pick(PROSE)
    if how == "other":
        return model_text(r, f)
    if how == "truth":
        texts = [c for turn in task.ground_truth for c in turn] or ["ls()"]
        calls = [keyword_call(r.pick(texts), task.involved_classes) for _ in range(r.number(1, 3))]
    else:
        calls = [tool_call(r, f, task) for _ in range(r.number(1, 3))]
    text = "[" + ", ".join(calls) + "]"
    if r.one_in(6):  # the same calls as JSON tool calls, for envs with a JSON decoder
        text = as_json_calls(r, text)
    if how == "mutated":
        text = near_miss(r, text)
    return wrapped(r, text) if r.one_in(5) else text


def as_json_calls(r: Choices, text: str) -> str:
    """Python calls as JSON (a list, or ``<tool_call>`` blocks); unchanged when they have no
    JSON form."""
    from fcenv.handlers import decode

    try:
        objects = [{"name": c.name, "arguments": c.arguments} for c in decode(text, "python")]
        if r.one_in(2):
            return json.dumps(objects)
        return "\n".join(f"<tool_call>{json.dumps(o)}</tool_call>" for o in objects)
    except (DecodeError, TypeError, ValueError):
        return text


def multi_turn_result(r: Choices, f: Fuzz, task: Task) -> list[list[list[Call] | DecodeError]]:
    """A recorded trajectory as ``check_recorded`` takes it: decoded steps per turn, sometimes
    with a turn too many or too few."""
    from fcenv.multi_turn.executor import decode_step

    def step() -> list[Call] | DecodeError:
        how = r.number(0, 9)
        if how == 0:
            return DecodeError("no call")
        if how == 1:  # calls as a caller other than the env might build them: any values
            doc = r.pick(task.functions)
            params = list(doc.get("parameters", {}).get("properties", {})) or ["a"]
            name = doc["name"] if not r.one_in(10) else r.pick(HOSTILE_NAMES)
            values = {r.pick(params): HUGE_INT if r.one_in(4) else py_object(r, huge=True) for _ in range(r.number(0, 2))}
            return [Call(name, values)]
        return decode_step(step_text(r, f, task))

    if r.one_in(3):  # the ground truth, a step or two changed: verdicts near the line
        result = [[decode_step(text) for text in steps] for steps in ground_truth_steps(task)]
        for _ in range(r.number(0, 2)):
            turn = r.pick(result)
            turn.insert(r.number(0, len(turn)), step())
            if r.one_in(2):
                turn.pop(r.number(0, len(turn) - 1))
        return result
    turns = len(task.ground_truth) + r.pick([0, 0, 0, 0, -1, 1])
    return [[step() for _ in range(r.number(0, 3))] for _ in range(max(turns, 0))]


def long_step(r: Choices, f: Fuzz, task: Task) -> str:
    """A step of many calls, around the bound of a step (``MAX_STEP_CALLS``) or far over it."""
    count = r.pick([MAX_STEP_CALLS - 1, MAX_STEP_CALLS, MAX_STEP_CALLS + 1, 300, 2000])
    calls = [tool_call(r, f, task) for _ in range(r.number(1, 3))]
    return "[" + ", ".join(calls[i % len(calls)] for i in range(count)) + "]"


def episode_texts(r: Choices, f: Fuzz, task: Task) -> list[str]:
    """Step texts for an episode of ``task``: the ground truth (keyword calls, then prose, per
    turn) with a few steps changed or added; or fuzzed steps, often followed by enough prose to
    end every turn, sometimes after more calls in one turn than BFCL allows; sometimes a step
    of very many calls."""
    if r.one_in(3):
        texts = [text for steps in ground_truth_steps(task) for text in steps]
        for _ in range(r.number(0, 2)):
            i = r.number(0, len(texts))
            if i < len(texts) and r.one_in(2):
                texts[i] = step_text(r, f, task)
            else:
                texts.insert(i, step_text(r, f, task))
    else:
        texts = [step_text(r, f, task) for _ in range(r.number(1, 6))]
        if r.one_in(3):
            texts += [r.pick(PROSE[:3])] * 40
        if r.one_in(25):
            texts = ["[pwd()]"] * 21 + texts
    if r.one_in(12):
        texts.insert(r.number(0, len(texts)), long_step(r, f, task))
    return texts


def in_family(r: Choices, family: str, text: str) -> str:
    """A prompting-format step as a model of a native tool-calling family writes it: its calls
    in the family's format, sometimes with one of the family's format faults; text that holds
    no Python calls stays as it is."""
    from harness.generators_fc import broken, write

    try:
        calls = [(c.name, c.arguments) for c in decode_calls(text)]
    except (DecodeError, TypeError, ValueError):
        return text
    if not calls:
        return text
    try:
        return broken(family, calls, r.rng)[1] if r.one_in(6) else write(family, calls)
    except (TypeError, ValueError, RecursionError):  # values without a JSON form
        return text


def decode_calls(text: str) -> list[Call]:
    from fcenv.handlers import decode

    return decode(text, "python")
