"""fcenv's tasks as SkyRL-gym environments (fcenv.skyrl), driven through skyrl-gym's own
registry, ``make``, ``init`` and ``step``, as SkyRL's generator drives them."""

from __future__ import annotations

import pytest
import skyrl_gym
from omegaconf import DictConfig

from fcenv.algos.model.warmup import answer_text
from fcenv.data import load_tasks
from fcenv.skyrl import dataset_rows, register
from harness.trajectories import ground_truth_steps


@pytest.fixture(scope="module")
def env_id() -> str:
    return register()


def make(env_id, row, **config):
    # skyrl-train hands the env its config section as an OmegaConf DictConfig.
    return skyrl_gym.make(env_id, env_config=DictConfig(config), extras={**row, "max_turns": 50})


@pytest.mark.parametrize("reward", ["bfcl", "shaped"])
def test_a_single_turn_entry_pays_its_ground_truth_one_and_a_wrong_call_less(bfcl_dir, env_id, reward):
    path = bfcl_dir / "BFCL_v4_simple_python.json"
    task = load_tasks(path)[7]
    (row,) = dataset_rows(path, indices=[7])
    assert row["env_class"] == env_id and row["extra_info"] == {"dataset_path": str(path), "task_id": task.id}
    env = make(env_id, row, reward=reward)
    chat, info = env.init(row["prompt"])
    assert chat == row["prompt"] and chat[-1] == task.question[0][-1] and info["task_id"] == task.id
    out = env.step(answer_text(task.ground_truth))
    assert (out["reward"], out["done"], out["observations"]) == (1.0, True, [])
    assert out["metadata"]["valid"] and env.get_metrics()["valid"] == 1.0
    wrong = make(env_id, row, reward=reward)
    wrong.init(row["prompt"])
    out = wrong.step("[" + task.functions[0]["name"] + "(nothing=1)]")
    assert out["done"] and out["reward"] < 1.0 and not out["metadata"]["valid"]
    assert out["metadata"]["error_type"]


@pytest.mark.parametrize("category", ["multi_turn_base", "multi_turn_miss_func"])
def test_a_multi_turn_entry_plays_to_its_verdict(bfcl_dir, env_id, category):
    path = bfcl_dir / f"BFCL_v4_{category}.json"
    task = load_tasks(path)[2]
    row = dataset_rows(path, indices=[2], reward="shaped")[0]
    env = make(env_id, row, reward="shaped")
    chat, _ = env.init(row["prompt"])
    total, outputs = 0.0, []
    for texts in ground_truth_steps(task):
        for text in texts:
            out = env.step(text)
            total += out["reward"]
            outputs.append(out)
            chat += [{"role": "assistant", "content": text}] + out["observations"]
    assert outputs[-1]["done"] and not any(o["done"] for o in outputs[:-1])
    assert outputs[-1]["metadata"]["valid"] and total == pytest.approx(1.0)
    assert any(o["observations"] and o["observations"][0]["role"] == "tool" for o in outputs)
    assert sum(m["role"] == "user" and m.get("content") == q[-1]["content"]
               for m in chat for q in task.question[1:] if q) >= 1  # later user turns came as observations
    assert env.get_metrics() == {"valid": 1.0, "steps": len(outputs), "reward": pytest.approx(1.0)}

    failing = make(env_id, row, reward="shaped")
    failing.init(row["prompt"])
    total, out = 0.0, {"done": False}
    while not out["done"]:
        out = failing.step("I cannot help with that.")
        total += out["reward"]
    assert not out["metadata"]["valid"] and out["metadata"]["error_type"].startswith("multi_turn:") and total < 1.0


def test_env_config_supplies_the_dataset_and_settings_and_a_row_without_a_task_is_refused(env_id):
    row = dataset_rows("multi_turn_train", indices=[0], system_prompt="Call functions.")[0]
    assert row["prompt"][0] == {"role": "system", "content": "Call functions."}
    env = make(env_id, {"extra_info": {"task_id": row["extra_info"]["task_id"]}},
               dataset_path="multi_turn_train", system_prompt="Call functions.", reward="steps")
    chat, _ = env.init(None)
    assert chat == row["prompt"]
    out = env.step("[get_user_id(user='Bob')]")
    assert not out["done"] and out["observations"][0]["role"] == "tool" and out["reward"] >= 0.0
    with pytest.raises(ValueError, match="extra_info"):
        make(env_id, {"extra_info": {}}, reward="shaped")
