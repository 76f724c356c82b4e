"""LPR's process rewards: Monte Carlo values of trajectory prefixes from env snapshots, preference
pairs that TRL's DPOTrainer trains on, and the critic warm-started on the values."""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("peft")
from fcenv.algos.config import ConfigError, parse_config
from fcenv.algos.model.warmup import answer_text
from fcenv.algos.process_rewards import (
    Trajectory,
    monte_carlo_values,
    preference_pairs,
    replay,
    sampler_from_flags,
    step_records,
)
from fcenv.algos.tiny.build import MULTI_TURN_TRAIN, TINY_SYSTEM_PROMPT, TINY_TRAIN
from fcenv.algos.training.loop import Runner
from tests.support.runs import process_rewards_flags

ROOT = Path(__file__).resolve().parents[2]


def _flags(model: Path, dataset: Path, **extra) -> argparse.Namespace:
    return process_rewards_flags(model, dataset, **{"system_prompt": TINY_SYSTEM_PROMPT, "max_new_tokens": 16,
                                                    "n_rollout_threads": 8, **extra})


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_command_values_every_prefix_of_sampled_multi_turn_trajectories(tiny_model, tmp_path):
    out = tmp_path / "lpr"
    done = subprocess.run([sys.executable, "-m", "fcenv", "process-rewards", "--model_name_or_path", str(tiny_model),
                           "--system_prompt", TINY_SYSTEM_PROMPT, "--dataset_path", str(MULTI_TURN_TRAIN),
                           "--tasks", "4", "--trajectories", "3", "--completions", "3", "--threads", "8",
                           "--max_new_tokens", "16", "--margin", "0.3", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    rows = _read(out / "trajectories.jsonl")
    assert summary["trajectories"] == len(rows) == 12 and len({r["task_index"] for r in rows}) == 4
    first_values: dict[int, set] = {}
    for row in rows:
        steps = row["steps"]
        assert steps and [s["message_index"] for s in steps] == sorted(s["message_index"] for s in steps)
        for step in steps:
            assert row["messages"][step["message_index"]] == {"role": "assistant", "content": step["action"]}
            assert step["value"] * 3 == pytest.approx(round(step["value"] * 3))  # a share of 3 completions
        # An action is worth the prefix it leads to; the last one, its episode's verdict.
        assert [s["action_value"] for s in steps[:-1]] == [s["value"] for s in steps[1:]]
        assert steps[-1]["action_value"] == float(row["valid"])
        first_values.setdefault(row["task_index"], set()).add(steps[0]["value"])
    assert all(len(v) == 1 for v in first_values.values())  # one state, valued once
    for pair in _read(out / "pairs.jsonl"):
        assert pair["chosen_value"] - pair["rejected_value"] >= 0.3 and pair["chosen"] != pair["rejected"]
    assert summary["pairs"] == len(_read(out / "pairs.jsonl"))


def test_pairs_prefer_the_valid_answer_and_trl_dpo_trains_on_them(tiny_model, tmp_path):
    pytest.importorskip("trl")
    sampler = sampler_from_flags(_flags(tiny_model, TINY_TRAIN))
    tasks = sampler.envs[0].unwrapped.tasks
    chosen = [i for i, t in enumerate(tasks) if t.kind == "ast"][:4]
    trajectories = []
    for index in chosen:
        trajectories += [Trajectory(index, [answer_text(tasks[index].ground_truth)]), Trajectory(index, ["[nothing()]"])]
    replayed = [replay(sampler.envs[0], t) for t in trajectories]
    assert [r.valid for r in replayed] == [True, False] * 4
    values = monte_carlo_values(sampler, replayed, completions=2)
    pairs = preference_pairs(replayed, [step_records(r, values) for r in replayed], margin=0.5)
    assert len(pairs) == 4
    for pair, index in zip(pairs, chosen):
        assert pair["chosen"][0]["content"] == answer_text(tasks[index].ground_truth)
        assert pair["rejected"][0]["content"] == "[nothing()]"
        assert (pair["chosen_value"], pair["rejected_value"]) == (1.0, 0.0)
        assert pair["prompt"][-1] == tasks[index].question[0][-1]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in pairs))

    from transformers import AutoModelForCausalLM
    from trl import DPOConfig, DPOTrainer

    from fcenv.algos.model.loading import load_tokenizer
    from datasets import load_dataset

    tokenizer = load_tokenizer(tiny_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    config = DPOConfig(output_dir=str(tmp_path / "dpo"), max_steps=2, per_device_train_batch_size=2, report_to=[],
                       save_strategy="no", use_cpu=True, logging_steps=1, max_length=512)
    trainer = DPOTrainer(model=model, args=config, train_dataset=load_dataset("json", data_files=str(data), split="train"),
                         processing_class=tokenizer)
    row = trainer.train_dataset[0]
    rendered = sampler.envs[0].unwrapped.renderer(pairs[0]["prompt"])
    assert tokenizer.decode(row["prompt_ids"]) == rendered  # the prompt exactly as the env renders it
    assert tokenizer.decode(row["chosen_ids"]).startswith(pairs[0]["chosen"][0]["content"])
    trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)


def _trajectories_file(tmp_path: Path, value: float) -> Path:
    """Every single-turn task's prompt valued at ``value``, in process-rewards' format."""
    from fcenv.data import load_tasks
    from fcenv.prompts import system_prompt, with_system_prompt

    rows = []
    for index, task in enumerate(load_tasks(str(TINY_TRAIN))[:40]):
        messages = with_system_prompt(task.question[0], system_prompt(task.functions, TINY_SYSTEM_PROMPT))
        rows.append({"id": task.id, "task_index": index, "valid": True, "messages": messages + [
            {"role": "assistant", "content": "x"}], "steps": [{"message_index": len(messages), "action": "x",
                                                                "value": value, "action_value": value}]})
    path = tmp_path / "trajectories.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_critic_starts_from_the_monte_carlo_values(tiny_model, tmp_path):
    values = _trajectories_file(tmp_path, 0.8)
    args = ["--model_name_or_path", str(tiny_model), "--system_prompt", TINY_SYSTEM_PROMPT, "--hide_function_docs",
            "--results_dir", str(tmp_path / "results"), "--n_rollout_threads", "8", "--num_env_steps", "8",
            "--max_new_tokens", "16", "--eval_interval", "0", "--no-progress", "--lora_r", "4",
            "--critic_init_values", str(values), "--critic_init_steps", "60"]
    logs = []
    runner = Runner(parse_config(args), log=logs.append)
    assert any("critic warm-up on 40 Monte Carlo prefix values" in line for line in logs)
    from fcenv.algos.process_rewards import prefix_value_examples

    examples = prefix_value_examples(values, runner.codec, runner.envs[0].unwrapped.renderer)
    predicted = runner.policy.context_values([context for context, _ in examples])
    assert float((predicted - 0.8).abs().mean()) < 0.2  # the value head starts at 0 everywhere
    metrics = runner.train_iteration()  # and RL goes on from there
    assert math.isfinite(metrics["train/policy_loss"]) and math.isfinite(metrics["train/value_loss"])


def test_a_bad_values_file_is_refused_before_the_run_folder_exists(tiny_model, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": [], "steps": [{"message_index": 0}]}\n')
    results = tmp_path / "results"
    args = ["--model_name_or_path", str(tiny_model), "--system_prompt", TINY_SYSTEM_PROMPT, "--hide_function_docs",
            "--results_dir", str(results), "--no-progress", "--critic_init_values", str(bad)]
    with pytest.raises(ConfigError, match=r"bad.jsonl, line 1: not a trajectory"):
        Runner(parse_config(args), log=lambda message: None)
    assert not results.exists()
    with pytest.raises(SystemExit):
        parse_config(["--critic_init_values", str(tmp_path / "missing.jsonl")])
    with pytest.raises(SystemExit):
        parse_config(["--algorithm_name", "GRPO", "--group_size", "2", "--critic_init_values", str(bad)])


def test_a_runs_held_out_tasks_are_never_sampled(tiny_model, tmp_path):
    import shutil

    from tests.support.runs import make_runner

    data = tmp_path / "data"
    (data / "possible_answer").mkdir(parents=True)
    shutil.copy(TINY_TRAIN, data / "mine.json")
    shutil.copy(TINY_TRAIN.parent / "possible_answer" / TINY_TRAIN.name, data / "possible_answer" / "mine.json")
    runner = make_runner(tiny_model, tmp_path / "results", "--dataset_path", str(data / "mine.json"),
                         "--eval_fraction", "0.2", "--num_env_steps", "4")
    run = runner.run()
    held_out = set(json.loads((run / "args.json").read_text())["resolved"]["eval_indices"])
    assert len(held_out) == 180
    from fcenv.algos.process_rewards import training_tasks

    sampler = sampler_from_flags(_flags(tiny_model, TINY_TRAIN, run=str(run), dataset_path=""))
    assert sampler.held_out == held_out
    chosen = training_tasks(sampler, 0, seed=1)
    assert len(chosen) == 720 and not held_out & set(chosen)
    assert not held_out & set(training_tasks(sampler, 300, seed=2))


def test_a_run_trained_under_a_prompt_variation_is_sampled_under_it(tiny_model, tmp_path):
    from transformers import AutoTokenizer

    from fcenv.env import FunctionCallingEnv

    markdown = "ret_fmt=json&tool_call_tag=True&func_doc_fmt=xml&prompt_fmt=markdown&style=classic"
    # The variation's prompt is long for the tiny model's window: the tasks whose prompt fits.
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    varied = FunctionCallingEnv(dataset_path=TINY_TRAIN, prompt_variation=markdown)
    fits = set()
    for index, task in enumerate(varied.tasks):
        _, info = varied.reset(options={"index": index})
        if len(tokenizer(info["messages"][0]["content"])["input_ids"]) < 900:
            fits.add(task.id)
    data = tmp_path / "data" / "short.json"
    (data.parent / "possible_answer").mkdir(parents=True)
    for source, target in ((TINY_TRAIN, data), (TINY_TRAIN.parent / "possible_answer" / TINY_TRAIN.name,
                                                 data.parent / "possible_answer" / data.name)):
        lines = [line for line in source.read_text().splitlines(keepends=True) if json.loads(line)["id"] in fits]
        target.write_text("".join(lines))
    assert len(fits) >= 8
    config = parse_config(["--model_name_or_path", str(tiny_model), "--prompt_variation", markdown,
                           "--dataset_path", str(data), "--results_dir", str(tmp_path / "results"),
                           "--n_rollout_threads", "4", "--num_env_steps", "4", "--max_new_tokens", "8", "--ppo_epoch",
                           "1", "--lora_r", "4", "--eval_interval", "0", "--save_interval", "1", "--no-progress"])
    run = Runner(config, log=lambda message: None).run()
    sampler = sampler_from_flags(_flags(tiny_model, data, run=str(run), dataset_path="", system_prompt=""))
    try:
        _, shown = sampler.envs[0].reset(options={"index": 3})
    finally:
        sampler.engine.close()
    _, trained = FunctionCallingEnv(dataset_path=data, prompt_variation=markdown).reset(options={"index": 3})
    assert shown["prompt_variation"] == markdown
    assert shown["messages"] == trained["messages"]
