"""FunctionCallingEnv as users drive it: gym.make, reset/step, vector envs, check_env."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

import fcenv  # noqa: F401  (registers the env)
from fcenv.env import FunctionCallingEnv
from fcenv.prompts import render_plain
from tests.support.answers import gt_answer


@pytest.fixture
def simple_path(bfcl_dir):
    return bfcl_dir / "BFCL_v4_simple_python.json"


def test_make_by_id_after_import(simple_path):
    env = gym.make("fcenv/FunctionCalling-v0", dataset_path=simple_path)
    obs, info = env.reset(seed=0)
    assert isinstance(obs, str) and info["id"].startswith("simple_python_")
    assert env.observation_space.contains(obs)


def test_make_with_module_prefix_needs_no_import(simple_path):
    code = (
        "import gymnasium as gym, sys\n"
        f"env = gym.make('fcenv:fcenv/FunctionCalling-v0', dataset_path={str(simple_path)!r})\n"
        "obs, info = env.reset(seed=1)\n"
        "print(info['id'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().startswith("simple_python_")


@pytest.mark.parametrize("category", ["simple_python", "simple_java", "parallel_multiple", "irrelevance", "multi_turn_base"])
def test_check_env_passes(bfcl_dir, category):
    env = gym.make("fcenv/FunctionCalling-v0", dataset_path=bfcl_dir / f"BFCL_v4_{category}.json", render_mode="ansi")
    check_env(env.unwrapped)


def test_reset_is_reproducible(simple_path):
    a, b = FunctionCallingEnv(simple_path), FunctionCallingEnv(simple_path)
    ids_a = [a.reset(seed=7)[1]["id"]] + [a.reset()[1]["id"] for _ in range(5)]
    ids_b = [b.reset(seed=7)[1]["id"]] + [b.reset()[1]["id"] for _ in range(5)]
    assert ids_a == ids_b and len(set(ids_a)) > 1


def test_correct_answer_is_rewarded(simple_path):
    env = FunctionCallingEnv(simple_path)
    _, info = env.reset(options={"id": "simple_python_0"})
    obs, reward, terminated, truncated, info = env.step(gt_answer(env.task))
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["valid"] and info["error_type"] is None
    assert info["calls"] == [{"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5, "unit": "units"}}]
    assert info["messages"][-1] == {"role": "assistant", "content": gt_answer(env.task)}


def test_prose_is_a_verdict_not_an_exception(simple_path):
    env = FunctionCallingEnv(simple_path, reward="shaped")
    env.reset(options={"index": 0})
    _, reward, terminated, _, info = env.step("I think you should compute the area yourself.")
    assert terminated and reward == 0.0
    assert info["error_type"] == "ast_decoder:decoder_failed" and info["facets"]["decodable"] == 0.0


def test_shaped_reward_gives_partial_credit(simple_path):
    env = FunctionCallingEnv(simple_path, reward="shaped")
    env.reset(options={"id": "simple_python_0"})
    _, partial, *_ = env.step("[calculate_triangle_area(base=10, height=6)]")
    env.reset(options={"id": "simple_python_0"})
    _, wrong_name, *_ = env.step("[triangle_area(base=10, height=6)]")
    assert 0.0 < wrong_name < partial < 1.0


def test_step_needs_reset(simple_path):
    env = FunctionCallingEnv(simple_path)
    with pytest.raises(ResetNeeded):
        env.step("[f()]")
    env.reset(seed=0)
    env.step("[f()]")
    with pytest.raises(ResetNeeded):
        env.step("[f()]")


def test_action_must_be_text(simple_path):
    env = FunctionCallingEnv(simple_path)
    env.reset(seed=0)
    with pytest.raises(TypeError, match="model's text"):
        env.step(b"[f()]")


def test_sequential_order_and_options(simple_path):
    env = FunctionCallingEnv(simple_path, order="sequential")
    assert [env.reset()[1]["id"] for _ in range(3)] == ["simple_python_0", "simple_python_1", "simple_python_2"]
    assert env.reset(options={"index": 10})[1]["id"] == "simple_python_10"
    with pytest.raises(KeyError, match="no entry with id"):
        env.reset(options={"id": "nope_1"})


def test_renderer_and_system_prompt_options(simple_path):
    env = FunctionCallingEnv(simple_path, renderer=render_plain, system_prompt="Tools: {functions}")
    obs, info = env.reset(options={"index": 0})
    assert obs.startswith("System: Tools: [") and obs.endswith("Assistant:")
    assert info["messages"][0]["content"].startswith("Tools: [")


def test_vector_env(simple_path):
    envs = gym.make_vec("fcenv/FunctionCalling-v0", num_envs=3, dataset_path=simple_path, reward="shaped")
    obs, info = envs.reset(seed=3)
    assert len(obs) == 3 and all(isinstance(o, str) for o in obs)
    obs, rewards, terminated, truncated, info = envs.step(["[f(x=1)]", "no call", "[g()]"])
    assert terminated.all() and rewards.shape == (3,)
    envs.close()


def test_snapshot_restore_branches(bfcl_dir):
    env = FunctionCallingEnv(bfcl_dir / "BFCL_v4_multi_turn_base.json")
    env.reset(options={"id": "multi_turn_base_0"})
    env.step("[cd(folder='document')]")
    snap = env.snapshot()
    first = env.step("[ls()]")[0]
    env.restore(snap)
    again = env.step("[ls()]")[0]
    env.restore(snap)
    other = env.step("[pwd()]")[0]
    assert first == again and other != first


def test_prior_format_file(tmp_path, bfcl_dir):
    questions = [json.loads(x) for x in (bfcl_dir / "BFCL_v4_simple_python.json").read_text().splitlines()[:3]]
    answers = [json.loads(x) for x in (bfcl_dir / "possible_answer" / "BFCL_v4_simple_python.json").read_text().splitlines()[:3]]
    merged = [{**q, "ground_truth": a["ground_truth"]} for q, a in zip(questions, answers)]
    path = tmp_path / "merged.json"
    path.write_text(json.dumps(merged, indent=2))
    env = FunctionCallingEnv(path, order="sequential")
    env.reset()
    assert env.step(gt_answer(env.task))[1] == 1.0


def test_hostile_text_through_step(simple_path, tmp_path):
    marker = tmp_path / "pwned"
    env = FunctionCallingEnv(simple_path, reward="shaped")
    texts = [
        f"[calculate_triangle_area(base=__import__('os').system('touch {marker}'), height=1)]",
        "[" * 20000 + "]" * 20000,
        "[f(x=" + "1+" * 20000 + "1)]",
        "[f(x=2**99999999999)]",
        "[f(x='" + "a" * 2_000_000 + "')]",
        "[f(x='\ud800')]",
        "\x00" * 1000,
    ]
    for text in texts:
        env.reset(options={"index": 0})
        _, reward, terminated, _, info = env.step(text)
        assert terminated and 0.0 <= reward <= 1.0 and not info["valid"]
    assert not marker.exists()


def test_options_are_checked_where_they_are_given(simple_path, bfcl_dir):
    """Bad options fail at construction or at the call that gives them, naming the option."""
    for bad in ("3", 0, -1, True, 2.5):
        with pytest.raises(ValueError, match=f"max_steps_per_turn must be a whole number of 1 or more, not {bad!r}"):
            FunctionCallingEnv(simple_path, max_steps_per_turn=bad)
    with pytest.raises(KeyError, match="unknown handler 'nope'"):
        FunctionCallingEnv(simple_path, handler="nope")
    env = FunctionCallingEnv(simple_path)
    with pytest.raises(TypeError, match=r"options\['index'\] must be a whole number, not 2.7"):
        env.reset(options={"index": 2.7})
    import numpy as np

    assert env.reset(options={"index": np.int64(2)})[1]["id"] == env.tasks[2].id


def test_a_seeded_reset_restarts_the_sequence(simple_path):
    env = FunctionCallingEnv(simple_path, order="sequential")
    first = [env.reset(seed=3)[1]["id"]] + [env.reset()[1]["id"] for _ in range(2)]
    again = [env.reset(seed=3)[1]["id"]] + [env.reset()[1]["id"] for _ in range(2)]
    assert first == again == [t.id for t in env.tasks[:3]]


def test_a_snapshot_restores_only_into_its_own_dataset(simple_path, bfcl_dir):
    env = FunctionCallingEnv(simple_path)
    env.reset(options={"index": 1})
    snapshot = env.snapshot()
    other = FunctionCallingEnv(bfcl_dir / "BFCL_v4_multiple.json")
    with pytest.raises(ValueError, match="another dataset"):
        other.restore(snapshot)
    twin = FunctionCallingEnv(simple_path)
    twin.restore(snapshot)
    assert twin.task.id == env.tasks[1].id


def test_observations_stay_in_the_declared_space(simple_path):
    """The longest action the action space allows makes a chat longer than it: the observation
    space bounds nothing, so every observation belongs to it."""
    env = FunctionCallingEnv(simple_path)
    env.reset(options={"index": 0})
    observation, *_ = env.step("x" * env.action_space.max_length)
    assert len(observation) > env.action_space.max_length
    assert env.observation_space.contains(observation)


def write_area_answer(folder, side: int) -> None:
    (folder / "possible_answer").mkdir(parents=True, exist_ok=True)
    (folder / "possible_answer" / "BFCL_v4_simple_python.json").write_text(json.dumps(
        {"id": "simple_python_0", "ground_truth": [{"area": {"side": [side]}}]}) + "\n")


def write_area_task(folder, side: int):
    """One BFCL entry, area(side), in its own folder; its possible answer is ``side``."""
    doc = {"name": "area", "description": "Area of a square.", "parameters": {
        "type": "dict", "properties": {"side": {"type": "integer", "description": "Side."}}, "required": ["side"]}}
    (folder / "BFCL_v4_simple_python.json").write_text(json.dumps(
        {"id": "simple_python_0", "question": [[{"role": "user", "content": "Area of the square?"}]],
         "function": [doc]}) + "\n")
    write_area_answer(folder, side)
    return folder / "BFCL_v4_simple_python.json"


def test_a_new_env_judges_by_the_possible_answer_as_it_is_now(tmp_path):
    """A notebook: an env, the possible answer edited in place, a new env on the same file. The
    new env judges by the edited answer, though the question file is untouched."""
    path = write_area_task(tmp_path, side=3)
    first = gym.make("fcenv/FunctionCalling-v0", dataset_path=path)
    first.reset()
    assert first.step("[area(side=3)]")[1] == 1.0
    write_area_answer(tmp_path, side=4)
    second = gym.make("fcenv/FunctionCalling-v0", dataset_path=path)
    second.reset()
    assert second.step("[area(side=4)]")[1] == 1.0
    second.reset()
    assert second.step("[area(side=3)]")[1] < 1.0
