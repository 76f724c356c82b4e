"""`fcenv process-rewards` in FC mode (native tool calling): it samples and values with the tools
in the chat template and the family's format, in a run's own format and LoRA targets, and what
it writes trains a critic (FC run) and DPO (the tools column TRL reads)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("peft")
from fcenv.algos.config import ConfigError, parse_config
from fcenv.algos.model.warmup import answer_text, written_in
from fcenv.algos.process_rewards import (
    Trajectory,
    monte_carlo_values,
    preference_pairs,
    replay,
    sampler_from_flags,
    step_records,
)
from fcenv.algos.rollout.hf import HFEngine
from fcenv.algos.rollout.play import play
from fcenv.algos.tiny.build import MULTI_TURN_TRAIN, TINY_TRAIN
from fcenv.algos.training.loop import Runner
from fcenv.tool_formats import get_tool_format
from tests.support.runs import process_rewards_flags

ROOT = Path(__file__).resolve().parents[2]


def _flags(model: Path, dataset: Path, **extra) -> argparse.Namespace:
    return process_rewards_flags(model, dataset, **{"tool_format": "hermes", "max_new_tokens": 16, "n_rollout_threads": 4,
                                                    **extra})


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_fc_sampling_shows_the_tools_through_the_familys_template(tiny_model):
    """Every context the policy samples from is the chat with its task's tools, rendered by the
    family's template (the test model's own template renders no tools), tokenized as is."""
    from fcenv.algos.model.loading import load_tokenizer

    sampler = sampler_from_flags(_flags(tiny_model, MULTI_TURN_TRAIN))
    assert sampler.tool_format == "hermes"
    tokenizer = load_tokenizer(tiny_model)
    template = get_tool_format("hermes").chat_template
    env = sampler.envs[0]
    tasks = iter([0, 1, 2, 3])
    rollout = play(sampler.envs, HFEngine(sampler.policy), sampler.codec, lambda thread: next(tasks, None),
                   max_new_tokens=sampler.max_new_tokens, generator=sampler.generator)
    assert rollout.actions
    for episode in rollout.episodes:
        _, info = env.reset(options={"index": episode.task_index})
        tools = info["tools"]
        assert [t["name"] for t in tools] == [f["name"] for f in env.unwrapped.tasks[episode.task_index].functions]
        first = rollout.actions[episode.action_indices[0]]
        shown = tokenizer.apply_chat_template(info["messages"], tools=tools, chat_template=template,
                                              add_generation_prompt=True, tokenize=False)
        assert "<tools>" in shown and tools[0]["name"] in shown
        assert first.context == tokenizer(shown, add_special_tokens=False).input_ids


def test_the_command_writes_fc_trajectories_with_their_tools(tiny_model, tmp_path):
    out = tmp_path / "lpr"
    done = subprocess.run([sys.executable, "-m", "fcenv", "process-rewards", "--model_name_or_path", str(tiny_model),
                           "--tool_format", "mistral", "--dataset_path", str(MULTI_TURN_TRAIN), "--tasks", "3",
                           "--trajectories", "2", "--completions", "2", "--threads", "6", "--max_new_tokens", "16",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["tool_format"] == "mistral" and summary["trajectories"] == 6
    from fcenv.data import load_tasks

    tasks = load_tasks(str(MULTI_TURN_TRAIN))
    for row in _read(out / "trajectories.jsonl"):
        assert [t["name"] for t in row["tools"]] == [f["name"] for f in tasks[row["task_index"]].functions]
        for step in row["steps"]:
            message = row["messages"][step["message_index"]]
            assert message["role"] == "assistant"
            # FC mode's chat: a step the family's decoder reads as calls is a tool_calls message.
            assert bool(message.get("tool_calls")) == bool(_calls(step["action"], "mistral"))


def _calls(text: str, family: str) -> list:
    from fcenv.handlers import DecodeError

    try:
        return get_tool_format(family).step_calls(text)
    except DecodeError:
        return []


def test_fc_verdicts_values_and_dpo_pairs_with_the_tools(tiny_model, tmp_path):
    """The family's format is what is judged valid; the pairs carry their tools, and TRL's
    DPOTrainer renders each pair's prompt with them exactly as the env does."""
    pytest.importorskip("trl")
    sampler = sampler_from_flags(_flags(tiny_model, TINY_TRAIN))
    env = sampler.envs[0]
    tasks = env.unwrapped.tasks
    written = written_in(get_tool_format("hermes"))
    chosen = [i for i, t in enumerate(tasks) if t.kind == "ast"][:2]
    trajectories = []
    for index in chosen:
        right = answer_text(tasks[index].ground_truth)
        trajectories += [Trajectory(index, [written(right)]), Trajectory(index, [right])]  # the prompting syntax fails
    replayed = [replay(env, t) for t in trajectories]
    assert [r.valid for r in replayed] == [True, False] * 2
    values = monte_carlo_values(sampler, replayed, completions=2)
    pairs = preference_pairs(replayed, [step_records(r, values) for r in replayed], margin=0.5)
    assert len(pairs) == 2
    for pair, index in zip(pairs, chosen):
        assert json.loads(pair["tools"]) == replayed[2 * chosen.index(index)].tools
        assert pair["chosen"][0]["content"].startswith("<tool_call>\n")
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in pairs))

    from transformers import AutoModelForCausalLM
    from trl import DPOConfig, DPOTrainer

    from fcenv.algos.model.loading import load_tokenizer
    from datasets import load_dataset

    tokenizer = load_tokenizer(tiny_model)
    tokenizer.chat_template = get_tool_format("hermes").chat_template  # the model's own renders no tools
    config = DPOConfig(output_dir=str(tmp_path / "dpo"), max_steps=1, per_device_train_batch_size=2, report_to=[],
                       save_strategy="no", use_cpu=True, max_length=1024)
    trainer = DPOTrainer(model=AutoModelForCausalLM.from_pretrained(tiny_model), args=config, processing_class=tokenizer,
                         train_dataset=load_dataset("json", data_files=str(data), split="train"))
    row = trainer.train_dataset[0]
    assert tokenizer.decode(row["prompt_ids"]) == env.unwrapped.renderer(pairs[0]["prompt"], json.loads(pairs[0]["tools"]))


def _fc_trajectories(tmp_path: Path, value: float, with_tools: bool = True) -> Path:
    """Every multi-turn task's first prompt valued at ``value``, as FC process-rewards writes it."""
    from fcenv.env import FunctionCallingEnv

    env = FunctionCallingEnv(str(MULTI_TURN_TRAIN), tool_format="hermes", order="sequential")
    rows = []
    for index in range(24):
        _, info = env.reset(options={"index": index})
        row = {"id": info["id"], "task_index": index, "valid": True, "messages": info["messages"] + [
            {"role": "assistant", "content": "x"}],
            "steps": [{"message_index": len(info["messages"]), "action": "x", "value": value, "action_value": value}]}
        rows.append({**row, "tools": info["tools"]} if with_tools else row)
    path = tmp_path / ("fc.jsonl" if with_tools else "prompting.jsonl")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _fc_run_flags(tiny_model: Path, tmp_path: Path, *extra: str) -> list[str]:
    return ["--model_name_or_path", str(tiny_model), "--dataset_path", str(MULTI_TURN_TRAIN), "--tool_format", "hermes",
            "--results_dir", str(tmp_path / "results"), "--n_rollout_threads", "4", "--num_env_steps", "4",
            "--max_new_tokens", "16", "--eval_interval", "0", "--no-progress", "--lora_r", "4", *extra]


def test_an_fc_run_warm_starts_its_critic_on_fc_values_and_refuses_prompting_ones(tiny_model, tmp_path):
    values = _fc_trajectories(tmp_path, 0.7)
    logs = []
    runner = Runner(parse_config(_fc_run_flags(tiny_model, tmp_path, "--critic_init_values", str(values),
                                               "--critic_init_steps", "40")), log=logs.append)
    assert any("critic warm-up on 24 Monte Carlo prefix values" in line for line in logs)
    from fcenv.algos.process_rewards import prefix_value_examples

    examples = prefix_value_examples(values, runner.codec, runner.envs[0].unwrapped.renderer, with_tools=True)
    observation, _ = runner.envs[0].reset(options={"index": 0})
    assert examples[0][0] == runner.codec.encode(observation)  # the prefix as the run itself renders it
    predicted = runner.policy.context_values([context for context, _ in examples])
    assert float((predicted - 0.7).abs().mean()) < 0.2

    prompting = _fc_trajectories(tmp_path, 0.7, with_tools=False)
    with pytest.raises(ConfigError, match=r"prompting.jsonl, line 1: sampled in prompting mode, but this run "
                                          r"trains in FC mode"):
        Runner(parse_config(_fc_run_flags(tiny_model, tmp_path / "b", "--critic_init_values", str(prompting))),
               log=lambda message: None)
    assert not (tmp_path / "b" / "results").exists()


def test_a_runs_format_and_lora_targets_are_the_samplers(tiny_model, tmp_path):
    runner = Runner(parse_config(_fc_run_flags(tiny_model, tmp_path, "--lora_target_modules", "q_proj", "o_proj")),
                    log=lambda message: None)
    run = runner.run()
    sampler = sampler_from_flags(_flags(tiny_model, MULTI_TURN_TRAIN, run=str(run), dataset_path="", tool_format=""))
    assert sampler.tool_format == "hermes" and sampler.envs[0].unwrapped.settings.tool_format.name == "hermes"
    assert set(sampler.policy.model.peft_config["actor"].target_modules) == {"q_proj", "o_proj"}
    # Without a run: the trainer's own adapter.
    from fcenv.algos.config import TrainConfig

    fresh = sampler_from_flags(_flags(tiny_model, MULTI_TURN_TRAIN))
    assert set(fresh.policy.model.peft_config["actor"].target_modules) == set(TrainConfig().lora_target_modules)


@pytest.mark.parametrize("flags, message", [
    (["--tool_format", "json"], "--tool_format: unknown tool format 'json'; known: hermes, llama_json, mistral"),
    (["--tool_format", "hermes", "--system_prompt", "{functions}"], "leave --system_prompt out"),
])
def test_bad_fc_flags_are_named(tmp_path, flags, message):
    done = subprocess.run([sys.executable, "-m", "fcenv", "process-rewards", "--out", str(tmp_path / "o"), *flags],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "o").exists()
