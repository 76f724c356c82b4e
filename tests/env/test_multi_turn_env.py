"""Multi-turn episodes through env.step: ground-truth replay, turn mechanics, hostile calls."""

from __future__ import annotations

import pytest

from fcenv.data import load_tasks
from fcenv.env import FunctionCallingEnv
from harness.trajectories import ground_truth_steps

CATEGORIES = ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"]


def play(env, task_id, turns):
    obs, info = env.reset(options={"id": task_id})
    total, steps = 0.0, 0
    for texts in turns:
        for text in texts:
            obs, reward, terminated, truncated, info = env.step(text)
            total += reward
            steps += 1
    return obs, total, terminated, truncated, info


@pytest.mark.slow
def test_ground_truth_replay_is_valid_for_all_800(bfcl_dir):
    valid = 0
    for category in CATEGORIES:
        path = bfcl_dir / f"BFCL_v4_{category}.json"
        env = FunctionCallingEnv(path, reward="shaped")
        for task in load_tasks(path):
            _, total, terminated, truncated, info = play(env, task.id, ground_truth_steps(task))
            assert terminated and not truncated, task.id
            assert info["valid"], (task.id, info["error_type"], info["errors"][:1])
            assert total == pytest.approx(1.0), task.id
            valid += 1
    assert valid == 800


@pytest.fixture
def base_env(bfcl_dir):
    return FunctionCallingEnv(bfcl_dir / "BFCL_v4_multi_turn_base.json")


def test_tool_results_enter_the_next_observation(base_env):
    base_env.reset(options={"id": "multi_turn_base_0"})
    obs, reward, terminated, truncated, info = base_env.step("[ls(a=True)]")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["results"] == ['{"current_directory_content": ["document", "archive"]}']
    assert info["messages"][-1] == {"role": "tool", "name": "ls(a=True)", "content": info["results"][0]}
    assert info["results"][0] in obs and obs.endswith("<|im_start|>assistant\n")
    assert info["facets"]["decodable"] == 1.0 and info["facets"]["step_executed"] == 1.0


def test_prose_ends_the_turn_and_brings_the_next_question(base_env, bfcl_dir):
    task = {t.id: t for t in load_tasks(bfcl_dir / "BFCL_v4_multi_turn_base.json")}["multi_turn_base_0"]
    base_env.reset(options={"id": task.id})
    obs, _, terminated, _, info = base_env.step("I cannot do that.")
    assert not terminated and info["turn"] == 0 and info["turn_valid"] is False
    assert info["turn_error_type"] == "multi_turn:empty_turn_model_response"
    assert info["messages"][-1] == task.question[1][0]
    for _ in range(len(task.ground_truth) - 1):
        obs, reward, terminated, truncated, info = base_env.step("No.")
    assert terminated and not info["valid"] and info["error_type"] == "multi_turn:empty_turn_model_response"


def test_held_out_functions_are_announced_on_their_turn(bfcl_dir):
    path = bfcl_dir / "BFCL_v4_multi_turn_miss_func.json"
    task = {t.id: t for t in load_tasks(path)}["multi_turn_miss_func_0"]
    env = FunctionCallingEnv(path)
    env.reset(options={"id": task.id})
    turns = ground_truth_steps(task)
    for texts in turns[:3]:
        for text in texts:
            _, _, _, _, info = env.step(text)
    announcement = info["messages"][-1]
    assert announcement["role"] == "user" and "'name': 'sort'" in announcement["content"]
    assert announcement["content"].endswith("I have updated some more functions you can choose from. What about now?")


def test_too_many_steps_in_a_turn_force_terminates(base_env):
    base_env.reset(options={"id": "multi_turn_base_0"})
    for step in range(21):
        obs, reward, terminated, truncated, info = base_env.step("[pwd()]")
        if step < 20:
            assert not (terminated or truncated)
    assert truncated and not terminated
    assert not info["valid"] and info["error_type"] == "multi_turn:force_terminated"


def test_episodes_are_deterministic(bfcl_dir):
    path = bfcl_dir / "BFCL_v4_multi_turn_base.json"
    runs = []
    for _ in range(2):
        env = FunctionCallingEnv(path)
        env.reset(seed=11)
        runs.append([env.step(t)[0] for t in ["[ls()]", "[post_tweet(content='hi')]", "done"]])
    assert runs[0] == runs[1]


HOSTILE = [
    "[__import__(name='os')]",
    "[exec(source='import os; os.system(\"touch {marker}\")')]",
    "[eval(expression='1+1')]",
    "[open(file='{marker}', mode='w')]",
    "[system(command='touch {marker}')]",
    "[os.system(command='touch {marker}')]",
    "[ls.__globals__(x=1)]",
    "[cd(folder=__import__('os').system('touch {marker}'))]",
    "[echo(content=().__class__.__bases__[0].__subclasses__(), file_name='x')]",
    "[cd(folder=9**9**9)]",
    "[mean(numbers=[1e308, 1e308])]",
    "[" * 20000 + "pwd()" + "]" * 20000,
    "[echo(content='" + "a" * 2_000_000 + "', file_name='big.txt')]",
    "[exit()]",
    "[kill(pid=1)]",
    "[run(cmd='x')]",
]


def test_hostile_calls_never_execute(bfcl_dir, tmp_path):
    marker = tmp_path / "pwned"
    env = FunctionCallingEnv(bfcl_dir / "BFCL_v4_multi_turn_base.json", reward="shaped")
    for template in HOSTILE:
        env.reset(options={"id": "multi_turn_base_0"})
        obs, reward, terminated, truncated, info = env.step(template.replace("{marker}", str(marker)))
        assert isinstance(obs, str) and reward == 0.0
        for result in info.get("results", []):
            assert result.startswith("Error during execution") or '"error"' in result
    assert not marker.exists()


def test_state_bfcl_shares_between_model_and_truth_is_shared(bfcl_dir):
    """BFCL's model and ground-truth instances of one entry share some objects (long-context
    cards, TwitterAPI's default lists); verdicts only agree with BFCL's if ours do too."""
    from fcenv.multi_turn.trajectory import Trajectory

    tasks = {t.id: t for t in load_tasks(bfcl_dir / "BFCL_v4_multi_turn_long_context.json")}
    travel = next(t for t in tasks.values() if "TravelAPI" in t.involved_classes)
    twitter = next(t for t in tasks.values() if "TwitterAPI" in t.involved_classes)
    trajectory = Trajectory(travel)
    model, truth = trajectory.model.instances["TravelAPI"], trajectory.truth.instances["TravelAPI"]
    shared = [c for c in model.credit_card_list if model.credit_card_list[c] is truth.credit_card_list[c]]
    assert shared and len(shared) < len(model.credit_card_list)  # the filler cards, not the scenario's
    trajectory = Trajectory(twitter)
    model, truth = trajectory.model.instances["TwitterAPI"], trajectory.truth.instances["TwitterAPI"]
    assert model._default_mentions is truth._default_mentions
    assert Trajectory(twitter).model.instances["TwitterAPI"]._default_mentions is not model._default_mentions


@pytest.mark.parametrize("reward", ["bfcl", "shaped", "steps"])
def test_a_last_turn_cut_off_by_the_step_limit_is_never_paid(reward):
    """BFCL still judges a last turn its step limit cut off (its evaluator flags only an entry
    that stopped early), and here the looped calls leave the right state and results, so the
    verdict is valid; the reward pays nothing, or looping to the limit would be taught."""
    from fcenv.tasks import Task

    task = Task(id="multi_turn_loop_0", question=[[{"role": "user", "content": "Add 1 and 2."}]], functions=[],
                ground_truth=[["add(a=1, b=2)"]], involved_classes=["MathAPI"], declared_kind="multi_turn")
    env = FunctionCallingEnv(tasks=[task], max_steps_per_turn=2, reward=reward)
    env.reset()
    total = 0.0
    for _ in range(3):
        _, paid, terminated, truncated, info = env.step("[add(a=1, b=2)]")
        total += paid
    assert truncated and not terminated
    assert info["valid"]  # BFCL's verdict, unchanged
    assert total == 0.0
    # The same calls, then a reply that ends the turn, earn the whole reward.
    env.reset()
    total = sum(env.step(text)[1] for text in ["[add(a=1, b=2)]", "The sum is 3."])
    assert total == pytest.approx(1.0)
