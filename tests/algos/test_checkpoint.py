"""Resume round-trip: k iterations, save, resume, m more == k + m iterations in one go."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

pytest.importorskip("peft")
from fcenv.algos.config import parse_config
from fcenv.algos.store.checkpoint import latest_checkpoint
from fcenv.algos.store.results import read_metrics
from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT
from fcenv.algos.training.loop import Runner

THREADS = 3


def config(model, results, iterations: int, *extra: str):
    return parse_config([
        "--model_name_or_path", str(model), "--system_prompt", TINY_SYSTEM_PROMPT, "--hide_function_docs", "--results_dir", str(results),
        "--n_rollout_threads", str(THREADS), "--num_env_steps", str(THREADS * iterations), "--max_new_tokens", "10",
        "--ppo_epoch", "2", "--num_mini_batch", "2", "--lora_r", "4", "--lr", "5e-3", "--save_interval", "100",
        "--eval_interval", "2", "--eval_episodes", "4", "--seed", "7", "--no-progress", *extra])


def state_of(runner: Runner) -> dict:
    return {
        "params": {n: p.detach().clone() for n, p in runner.policy.named_parameters() if p.requires_grad},
        "actor_opt": runner.actor_optimizer.state_dict(),
        "critic_opt": runner.critic_optimizer.state_dict(),
        "tasks_rng": runner.rng.bit_generator.state,
        "sampling": runner.sampling.get_state(),
        "torch": torch.get_rng_state(),
        "numpy": np.random.get_state()[1].copy(),
        "python": random.getstate(),
        "iteration": runner.iteration,
        "samples": runner.samples,
    }


def assert_same_optimizer(a: dict, b: dict) -> None:
    assert a["param_groups"] == b["param_groups"]
    assert a["state"].keys() == b["state"].keys()
    for key in a["state"]:
        for name, value in a["state"][key].items():
            other = b["state"][key][name]
            assert torch.equal(value, other) if torch.is_tensor(value) else value == other


def tensorboard_steps(run_dir, tag: str) -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir / "logs"), size_guidance={"scalars": 0})
    events.Reload()
    return [e.step for e in events.Scalars(tag)]


def test_resume_continues_exactly(tiny_model, tmp_path):
    straight = Runner(config(tiny_model, tmp_path / "a", 3), log=lambda m: None)
    straight.run()
    expected = state_of(straight)

    first = Runner(config(tiny_model, tmp_path / "b", 2), log=lambda m: None)
    run_dir = first.run()
    checkpoint = latest_checkpoint(run_dir)
    assert checkpoint is not None and checkpoint.name == "iter_000002"
    saved_state = json.loads((checkpoint / "state.json").read_text())
    assert saved_state["iteration"] == 2 and saved_state["samples"] == 2 * THREADS
    for part in ("actor/adapter_model.safetensors", "actor/adapter_config.json", "critic/adapter_model.safetensors",
                 "critic/value_head.safetensors", "optimizers.pt", "rng_rank0.pt"):
        assert (checkpoint / part).exists(), part
    del first

    resumed = Runner(config(tiny_model, tmp_path / "b", 3, "--resume", str(run_dir)), log=lambda m: None)
    assert resumed.iteration == 2 and resumed.run_dir == run_dir
    resumed.run()
    got = state_of(resumed)

    assert got["iteration"] == expected["iteration"] == 3
    assert got["samples"] == expected["samples"]
    assert got["params"].keys() == expected["params"].keys()
    for name, value in expected["params"].items():
        assert torch.equal(value, got["params"][name]), name
    assert_same_optimizer(expected["actor_opt"], got["actor_opt"])
    assert_same_optimizer(expected["critic_opt"], got["critic_opt"])
    assert got["tasks_rng"] == expected["tasks_rng"]
    assert torch.equal(got["sampling"], expected["sampling"])
    assert torch.equal(got["torch"], expected["torch"])
    assert np.array_equal(got["numpy"], expected["numpy"])
    assert got["python"] == expected["python"]

    # The logs continue: same metrics, TensorBoard steps go on from the checkpoint.
    straight_metrics = read_metrics(straight.run_dir)
    resumed_metrics = read_metrics(run_dir)
    assert [m["iteration"] for m in resumed_metrics] == [0, 1, 2, 3]  # 0: the held-out start
    assert straight_metrics[0] == resumed_metrics[0]
    for a, b in zip(straight_metrics[1:], resumed_metrics[1:]):
        assert a["rollout/reward"] == b["rollout/reward"]
        assert a["train/value_loss"] == b["train/value_loss"]
    assert tensorboard_steps(run_dir, "rollout/reward") == [THREADS, 2 * THREADS, 3 * THREADS]
    assert tensorboard_steps(run_dir, "heldout_greedy/accuracy") == [0, 2 * THREADS, 3 * THREADS]
    assert (run_dir / "checkpoints" / "iter_000003").is_dir()


def test_resume_refuses_a_different_setup(tiny_model, tmp_path):
    run_dir = Runner(config(tiny_model, tmp_path, 1), log=lambda m: None).run()
    for flags, name in ((["--algorithm_name", "APPO"], "algorithm_name"), (["--reward", "bfcl"], "reward"),
                        (["--system_prompt", "Call functions."], "system_prompt")):
        with pytest.raises(ValueError, match=f"cannot change within a run: \\['{name}'\\]"):
            # config() passes the tiny prompt first; a later flag wins
            Runner(config(tiny_model, tmp_path, 2, "--resume", str(run_dir), *flags), log=lambda m: None)
    # A run from before --critic_fraction (no such key in its args.json) trained a critic on
    # every layer: resuming it with a top-layer critic is refused.
    args = json.loads((run_dir / "args.json").read_text())
    del args["critic_fraction"]
    (run_dir / "args.json").write_text(json.dumps(args))
    with pytest.raises(ValueError, match="cannot change within a run: \\['critic_fraction'\\]"):
        Runner(config(tiny_model, tmp_path, 2, "--resume", str(run_dir), "--critic_fraction", "0.25"),
               log=lambda m: None)


def test_resume_records_what_it_changes(tiny_model, tmp_path):
    """More samples and another learning rate may change on resume; args.json says so."""
    run_dir = Runner(config(tiny_model, tmp_path, 1), log=lambda m: None).run()
    messages = []
    resumed = Runner(config(tiny_model, tmp_path, 2, "--resume", str(run_dir), "--lr", "1e-3"), log=messages.append)
    args = json.loads((run_dir / "args.json").read_text())
    assert args["num_env_steps"] == 2 * THREADS and args["lr"] == 1e-3
    assert args["resumes"] == [{"iteration": 1, "changed": {"lr": {"from": 5e-3, "to": 1e-3},
                                                            "num_env_steps": {"from": THREADS, "to": 2 * THREADS}}}]
    assert any("--lr 0.005 -> 0.001" in m for m in messages)
    assert resumed.run() == run_dir


def test_resume_refuses_data_changed_at_the_same_path_unless_told(tiny_model, tmp_path):
    """The run records a fingerprint of its data's tasks; a question file (or its possible
    answers) edited in place is refused on --resume, naming the file and the flag that accepts
    it, before the model loads; with the flag the run goes on and args.json records the change."""
    import shutil
    from pathlib import Path

    from fcenv.algos.store.manifest import CheckpointError

    bundled = Path(__file__).resolve().parents[2] / "fcenv" / "bundled"
    data = tmp_path / "data" / "mine.json"
    (data.parent / "possible_answer").mkdir(parents=True)
    shutil.copy(bundled / "tiny_train.json", data)
    shutil.copy(bundled / "possible_answer" / "tiny_train.json", data.parent / "possible_answer" / "mine.json")
    run_dir = Runner(config(tiny_model, tmp_path, 1, "--dataset_path", str(data)), log=lambda m: None).run()
    assert json.loads((run_dir / "args.json").read_text())["resolved"]["data"]["train"]["path"] == str(data)

    data.write_text(data.read_text().replace("Wake me at 13 hours", "Wake me at 14 hours", 1))
    with pytest.raises(CheckpointError) as refused:
        Runner(config(tiny_model, tmp_path, 2, "--resume", str(run_dir)), log=lambda m: None)
    assert f"the training data {data} (fingerprint " in str(refused.value)
    assert "pass --resume_with_changed_data" in str(refused.value)

    messages = []
    Runner(config(tiny_model, tmp_path, 2, "--resume", str(run_dir), "--resume_with_changed_data"),
           log=messages.append)
    args = json.loads((run_dir / "args.json").read_text())
    assert [line.split(" (")[0] for line in args["resumes"][-1]["data_changed"]] == [
        f"the training data {data}", f"the held-out data {data}"]  # the held-out share is of the same file
    assert any("resumed on changed data" in m for m in messages)
    assert args["resume_with_changed_data"] is False  # consent is given per resume, never inherited

    # The accepted data is the run's now; an edited possible answer is a change too.
    Runner(config(tiny_model, tmp_path, 2, "--resume", str(run_dir)), log=lambda m: None)
    answers = data.parent / "possible_answer" / "mine.json"
    first, rest = answers.read_text().split("\n", 1)
    answers.write_text(first.replace("51", "52") + "\n" + rest)
    with pytest.raises(CheckpointError, match="--resume_with_changed_data"):
        Runner(config(tiny_model, tmp_path, 2, "--resume", str(run_dir)), log=lambda m: None)
