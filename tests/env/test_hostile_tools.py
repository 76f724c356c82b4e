"""Whatever a user's tool does on the model's input (exit, raise any
``BaseException``, return what cannot be printed, hold state that ``!=`` cannot compare) is the
model's failure, an error result or a failed verdict; never an exception out of ``env.step``,
never the end of the process. Ctrl-C still stops a run."""

from __future__ import annotations

import pytest

from fcenv.backends import register_backend
from fcenv.env import FunctionCallingEnv
from fcenv.multi_turn.executor import ToolSession
from fcenv.handlers import Call
from harness.hostile_tools import ENTRIES, MISBEHAVIOURS, write_tasks
from harness.trajectories import ground_truth_steps


@pytest.fixture
def env(tmp_path):
    return FunctionCallingEnv(write_tasks(tmp_path), reward="shaped")


def play(env, texts):
    """Steps until the episode ends: its last step, with the episode's whole reward."""
    total = 0.0
    for text in texts:
        obs, reward, terminated, truncated, info = env.step(text)
        total += reward
        if terminated or truncated:
            return obs, total, terminated, truncated, info
    raise AssertionError("the episode did not end")


def value_for(how: str) -> str:
    """A string whose printed length makes ``act`` misbehave as ``how``."""
    return "x" * ((MISBEHAVIOURS.index(how) - 2) % len(MISBEHAVIOURS) + len(MISBEHAVIOURS))


def test_what_a_tool_does_on_model_input_is_the_models_failure(env):
    # The ground truth passes, numpy state and a ground-truth call that exits included.
    for index in range(len(ENTRIES)):
        env.reset(options={"index": index})
        _, reward, terminated, _, info = play(env, [s for steps in ground_truth_steps(env.task) for s in steps])
        assert terminated and info["valid"] and reward == 1.0, (index, info["error_type"], info["errors"])

    env.reset(options={"index": 1})
    results = {}
    for how in MISBEHAVIOURS:
        _, reward, terminated, truncated, info = env.step(f"[act(value={value_for(how)!r})]")
        assert not (terminated or truncated) and 0.0 <= reward <= 1.0
        (results[how],) = info["results"]
        assert type(results[how]) is str
    assert results["exit"] == f"Error during execution: SystemExit: act cannot use {value_for('exit')!r}"
    assert results["stop"] == f"Error during execution: ToolStop: {value_for('stop')}"
    assert results["unprintable"] == "Error during execution: SystemExit: printing a tool's result exits"
    assert results["sly"] == value_for("sly") and results["keyerror"] == f"Error during execution: {value_for('keyerror')!r}"
    _, reward, terminated, _, info = play(env, ["Done."])
    # The model's mood cannot be compared (it raises, and cannot be pickled): the state check fails.
    assert terminated and not info["valid"] and info["error_type"] == "multi_turn:instance_state_mismatch"
    assert 0.0 <= reward < 1.0 and all(isinstance(e, str) for e in info["errors"])

    env.reset(options={"index": 0})
    _, _, _, _, info = env.step("[parse(flag='--verbose')]")  # argparse inside the tool exits with status 2
    assert info["results"] == ["Error during execution: SystemExit: 2"]
    env.step("[record(value=3.0)]")  # numpy state: another value than the ground truth's differs
    _, reward, _, _, info = env.step("Done.")
    assert info["turn_error_type"] == "multi_turn:instance_state_mismatch" and reward < 0.5


def test_ctrl_c_in_a_tool_still_stops_the_run():
    @register_backend("InterruptedAPI", docs=[])
    class InterruptedAPI:
        def wait(self):
            raise KeyboardInterrupt

    session = ToolSession(["InterruptedAPI"], {})
    with pytest.raises(KeyboardInterrupt):
        session.execute(Call("wait", {}))
