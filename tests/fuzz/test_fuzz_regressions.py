"""Bugs the fuzzers found (tests/fuzz/test_fuzz*.py), kept as fixed cases.

1. A multi-turn step whose call holds an int too long to print (over Python's 4,300-digit
   limit, e.g. ``1<<100000``) crashed ``env.step`` while naming the tool message. BFCL renders
   every decoded call back to source (``repr``) before running it, fails there, and so treats
   the step as holding no call: the turn ends. ``decode_step`` now does the same.
2. ``check_recorded`` on calls built by another caller with such an int crashed computing
   the ``ground_truth_recall`` facet; such a call now matches nothing.
3. ... and crashed writing the verdict's messages when the int had reached the model's state
   (``adjustClimateControl(temperature=<int>)``); the difference is now described, not printed.
"""

from __future__ import annotations

import pytest

from fcenv.data import load_tasks
from fcenv.env import FunctionCallingEnv
from fcenv.multi_turn.executor import ToolSession, decode_step
from fcenv.multi_turn.trajectory import check_recorded
from fcenv.handlers import Call
from harness.trajectories import ground_truth_steps
from tests.support.replay import replay

HUGE_STEPS = [
    "[mkdir(dir_name=1<<100000)]",
    "[cd(folder='document'), mkdir(dir_name=[1<<20000])]",
    "[cd(folder={'x': {'y': 10**5000}})]",
]


@pytest.fixture(scope="module")
def base_task(bfcl_dir):
    return {t.id: t for t in load_tasks(bfcl_dir / "BFCL_v4_multi_turn_base.json")}["multi_turn_base_0"]


@pytest.mark.parametrize("text", HUGE_STEPS)
def test_unprintable_value_makes_a_step_without_calls(text):
    assert decode_step(text) == []


def test_env_ends_the_turn_on_an_unprintable_value(bfcl_dir):
    env = FunctionCallingEnv(bfcl_dir / "BFCL_v4_multi_turn_base.json", reward="shaped")
    env.reset(options={"id": "multi_turn_base_0"})
    _, reward, terminated, truncated, info = env.step(HUGE_STEPS[1])
    assert not (terminated or truncated) and 0.0 <= reward <= 1.0
    assert info["turn"] == 0 and info["turn_error_type"] == "multi_turn:empty_turn_model_response"


def test_unprintable_call_matches_nothing(base_task):
    session = ToolSession.for_task(base_task)
    assert session.canonical("cd", [], {"folder": 1 << 20000}) is None
    decoded = [[[Call("cd", {"folder": 1 << 20000})]]] + [[] for _ in base_task.ground_truth[1:]]
    result = check_recorded(base_task, decoded)
    assert not result.valid and all(0.0 <= v <= 1.0 for v in dict(result.facets).values())


@pytest.mark.oracle
def test_unprintable_steps_match_bfcl(oracle, base_task):
    """BFCL skips such a step too: the same verdict, calls, results and states."""
    turns = ground_truth_steps(base_task)
    cases = [[[step, *steps] for steps in turns[:1]] + turns[1:] for step in HUGE_STEPS]
    cases += [[[step] for _ in base_task.ground_truth] for step in HUGE_STEPS]
    requests = [{"op": "multi", "entry": {"id": base_task.id, "initial_config": base_task.initial_config,
                                          "involved_classes": base_task.involved_classes},
                 "ground_truth": base_task.ground_truth, "turns": steps} for steps in cases]
    for steps, theirs in zip(cases, oracle.run(requests)):
        ours = replay(base_task, steps)
        assert {k: ours[k] for k in ("valid", "error_type", "decoded", "results", "states")} == \
            {k: theirs[k] for k in ("valid", "error_type", "decoded", "results", "states")}


def test_unprintable_state_still_gives_a_verdict(bfcl_dir):
    tasks = load_tasks(bfcl_dir / "BFCL_v4_multi_turn_base.json")
    task = next(t for t in tasks if "VehicleControlAPI" in t.involved_classes and t.ground_truth[0])
    decoded = [[[Call("adjustClimateControl", {"temperature": 1 << 20000})]]] + [[] for _ in task.ground_truth[1:]]
    result = check_recorded(task, decoded)
    assert not result.valid and result.error_type == "multi_turn:instance_state_mismatch"
    assert all(isinstance(e, str) for e in result.errors) and "too long to print" in result.errors[1]
