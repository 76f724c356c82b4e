"""The varied multi-turn splits (datasets/multi_turn/make_multi_turn_varied.py) are training data a
real model can learn multi-turn tool use from: every entry's ground truth, played as the warm-up
demonstrates it (FC mode, one call per step, then a reply that ends the turn), gets BFCL's valid
verdict and the whole reward; the four kinds are there, on one or two of BFCL's classes with only
their docs shown; many tasks carry a value from a result into a later call; and none copies
BFCL's test set."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from fcenv.algos.model.warmup import ground_truth_steps, written_in
from fcenv.bundled import BUNDLED
from fcenv.env import FunctionCallingEnv
from fcenv.loader import func_doc_dir_for
from fcenv.multi_turn.executor import ToolSession, parse_call_text
from fcenv.tool_formats import get_tool_format

ROOT = Path(__file__).resolve().parents[2]
KINDS = ["multi_turn_varied_base", "multi_turn_varied_miss_param", "multi_turn_varied_miss_func",
         "multi_turn_varied_long"]


def played(env: FunctionCallingEnv, index: int) -> tuple[float, dict]:
    """The entry's ground truth as the warm-up writes it: its reward and the last step's info."""
    written = written_in(get_tool_format("hermes"))
    env.reset(options={"index": index})
    total, info = 0.0, {}
    for step in ground_truth_steps(env.tasks[index]):
        _, reward, terminated, truncated, info = env.step(written(step.text))
        total += reward
        if terminated or truncated:
            assert terminated and not truncated
            break
    return total, info


@pytest.mark.parametrize("split, every", [("multi_turn_varied_eval", 1), ("multi_turn_varied_train", 5)])
def test_each_entrys_ground_truth_passes_and_earns_the_whole_reward(split, every):
    env = FunctionCallingEnv(BUNDLED[split], tool_format="hermes", reward="bfcl", renderer=lambda messages, tools: "")
    for index in range(0, len(env.tasks), every):
        total, info = played(env, index)
        assert info["valid"] and total == 1.0, (env.tasks[index].id, info.get("error_type"))


def test_the_kinds_classes_and_turns_are_as_made_for_a_small_model():
    env = FunctionCallingEnv(BUNDLED["multi_turn_varied_train"], tool_format="hermes")
    kinds, classes = Counter(), Counter()
    docs = func_doc_dir_for(BUNDLED["multi_turn_varied_train"])
    assert docs == BUNDLED["multi_turn_varied_train"].parent / "multi_turn_func_doc"  # our docs, not BFCL's
    for task in env.tasks:
        kinds[task.category] += 1
        classes[len(task.involved_classes)] += 1
        asked = [turn for turn in task.question if turn]  # a miss_func announcement turn is the env's
        assert 1 <= len(asked) <= 5 and all(len(turn) == 1 for turn in asked), task.id
        # The prompt shows the involved classes' functions and no others; withheld ones come later.
        shown = {f["name"] for f in task.functions} | {f["name"] for fs in task.missed_functions.values() for f in fs}
        assert shown == {name for cls in task.involved_classes for name in ToolSession([cls], {}).routes}, task.id
        if task.category.endswith("miss_param"):
            assert [] in task.ground_truth and task.ground_truth[-1] != []
        if task.category.endswith("miss_func"):
            (turn, held), = task.missed_functions.items()
            assert task.question[turn] == [] and task.ground_truth[turn - 1] == []
            earlier = {parse_call_text(c)[0] for calls in task.ground_truth[:turn] for c in calls}
            assert not earlier & {f["name"] for f in held}, task.id
    assert set(kinds) == set(KINDS) and min(kinds.values()) >= 200
    assert set(classes) == {1, 2} and classes[2] >= 300
    # Long tasks are long: their starting states hold many more items than the others'.
    sizes = {kind: [] for kind in KINDS}
    for task in env.tasks:
        sizes[task.category].append(len(str(task.initial_config)))
    assert sum(sizes[KINDS[3]]) / len(sizes[KINDS[3]]) > 2 * sum(sizes[KINDS[0]]) / len(sizes[KINDS[0]])


def test_many_tasks_carry_a_value_from_a_result_into_a_later_call():
    """A later call needs a value no user message gave, that an earlier result showed (a user's
    id, a found file's folder, an order's id): in at least four tasks in ten."""
    env = FunctionCallingEnv(BUNDLED["multi_turn_varied_train"])
    carried = 0
    for task in env.tasks:
        session, said, results, found = ToolSession.for_task(task), "", [], False
        for turn, calls in enumerate(task.ground_truth):
            said += " ".join(message["content"] for message in task.question[turn])
            for call in calls:
                _, args, kwargs = parse_call_text(call)
                values = [str(v) for v in [*args, *kwargs.values()] if len(str(v)) >= 3]
                found |= any(v not in said and any(v in r for r in results) for v in values)
                results.append(session.execute_text(call))
        carried += found
    assert carried >= 0.4 * len(env.tasks)


def test_no_task_copies_bfcls_test_set(bfcl_dir):
    result = subprocess.run([sys.executable, "-m", "fcenv", "data", "check", "multi_turn_varied_train",
                             "multi_turn_varied_eval", "--bfcl_dir", str(bfcl_dir)], cwd=ROOT, capture_output=True,
                            text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("0 of the") == 2
