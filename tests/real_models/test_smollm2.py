"""A real pretrained model through the whole suite: SmolLM2-135M-Instruct, fetched by `make
models`, loaded as a plain checkpoint, rendered by its own chat template, answers generated and
scored on real BFCL entries, trained, and resumed to the same weights as an uninterrupted run."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

from safetensors.torch import load_file

from fcenv.algos.config import parse_config
from fcenv.algos.store.results import read_metrics
from fcenv.algos.training.loop import Runner
from fcenv.bfcl_sample import write_sample
from fcenv.data import load_tasks

ROOT = Path(__file__).resolve().parents[2]


def test_its_answers_are_generated_from_its_template_and_scored(smollm2, bfcl_dir, oracle, tmp_path):
    from transformers import AutoTokenizer

    data = write_sample(bfcl_dir, "simple_python", 4, tmp_path / "data")
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "fcenv", "generate", "--model", str(smollm2), "--data", str(data),
                             "--out", str(out), "--greedy", "--max_new_tokens", "24", "--include-input-log",
                             "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in (out / f"{data.stem}_result.json").read_text().splitlines()]
    # The prompt is SmolLM2's template over BFCL's own prompting messages (its system prompt, hints).
    entries = [json.loads(line) for line in data.read_text().splitlines()]
    bfcl_messages = oracle.run([{"op": "prompt", "entry": entry} for entry in entries])
    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    for line, entry, reference in zip(lines, entries, bfcl_messages):
        assert line["id"] == entry["id"] and isinstance(line["result"], str)
        [given] = line["inference_log"]
        assert given["role"] == "inference_input"
        assert given["content"]["formatted_prompt"] == tokenizer.apply_chat_template(
            reference["messages"], tokenize=False, add_generation_prompt=True)
    verdicts = tmp_path / "verdicts.jsonl"
    scored = subprocess.run([sys.executable, "-m", "fcenv", "evaluate", "--compat", "bfcl", "--data", str(data),
                             "--results", str(out / f"{data.stem}_result.json"), "--out", str(verdicts)], cwd=ROOT,
                            capture_output=True, text=True, timeout=300, check=False)
    assert scored.returncode == 0, scored.stderr
    assert "simple_python" in scored.stdout and len(verdicts.read_text().splitlines()) == 4


def flags(model: Path, data: Path, results: Path, iterations: int) -> list[str]:
    return ["--model_name_or_path", str(model), "--dataset_path", str(data), "--results_dir", str(results),
            "--n_rollout_threads", "2", "--num_env_steps", str(2 * iterations), "--max_new_tokens", "16",
            "--lora_r", "4", "--ppo_epoch", "1", "--num_mini_batch", "1", "--save_interval", "1",
            "--eval_interval", "0", "--seed", "3", "--no-progress",
            # SmolLM2 answers none of these within 16 tokens: every reward is 0, and so is every
            # advantage; the entropy bonus still moves the actor, which the test needs to see.
            "--entropy_coef", "0.01"]


def test_it_trains_and_a_resumed_run_equals_the_uninterrupted_one(smollm2, bfcl_dir, tmp_path):
    data = write_sample(bfcl_dir, "simple_python", 6, tmp_path / "data")
    straight = Runner(parse_config(flags(smollm2, data, tmp_path / "a", 2)), log=lambda message: None)
    run_dir = straight.run()
    args = json.loads((run_dir / "args.json").read_text())
    assert args["resolved"]["base_model"] == str(smollm2)  # its own folder, not copied
    metrics = read_metrics(run_dir)
    assert [m["samples"] for m in metrics] == [2, 4]
    assert all(m["rollout/action_tokens"] > 0 and m["train/actor_grad_norm"] > 0 for m in metrics)
    # Killed after its first checkpoint; --resume alone continues it.
    killed = tmp_path / "b" / "run1"
    shutil.copytree(run_dir, killed)
    shutil.rmtree(killed / "checkpoints" / "iter_000002")
    resumed = Runner(parse_config(["--resume", str(killed)]), log=lambda message: None)
    assert resumed.iteration == 1 and resumed.run() == killed
    expected = load_file(run_dir / "checkpoints" / "iter_000002" / "actor" / "adapter_model.safetensors")
    got = load_file(killed / "checkpoints" / "iter_000002" / "actor" / "adapter_model.safetensors")
    assert expected.keys() == got.keys() and all((expected[k] == got[k]).all() for k in expected)
    # The adapter moved: the update trained the real model's LoRA weights.
    start = load_file(run_dir / "checkpoints" / "iter_000000" / "actor" / "adapter_model.safetensors")
    assert any(not (start[k] == expected[k]).all() for k in start)
    assert len(load_tasks(data)) == 6


def test_it_trains_on_multi_turn_episodes_each_run_as_one_sequence(smollm2, tmp_path):
    """A short multi-turn run of a real model (make train-real-mt's recipe, shrunk): a warm-up on
    the ground-truth trajectories of the bundled multi_turn_varied split, then GRPO with BFCL's
    multi-turn verdict as the reward. Episodes take several steps, each episode's steps are scored
    and trained as one sequence, the actor's top layers learn, and the saved adapter loads in PEFT
    as the independent client loads it."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from fcenv.bundled import BUNDLED

    # Six one-class tasks of the held-out split (short prompts), with the split's docs beside them.
    source = BUNDLED["multi_turn_varied_eval"]
    lines = [line for line in source.read_text().splitlines() if json.loads(line)["involved_classes"] == ["MessageAPI"]][:6]
    kept = {json.loads(line)["id"] for line in lines}
    data = tmp_path / "data" / "messages.json"
    (data.parent / "possible_answer").mkdir(parents=True)
    data.write_text("\n".join(lines) + "\n")
    answers = [line for line in (source.parent / "possible_answer" / source.name).read_text().splitlines()
               if json.loads(line)["id"] in kept]
    (data.parent / "possible_answer" / data.name).write_text("\n".join(answers) + "\n")
    shutil.copytree(source.parent / "multi_turn_func_doc", data.parent / "multi_turn_func_doc")
    config = parse_config(["--model_name_or_path", str(smollm2), "--tool_format", "hermes", "--dataset_path", str(data),
                           "--eval_dataset_path", str(data), "--algorithm_name", "GRPO", "--group_size", "2",
                           "--n_rollout_threads", "2", "--gradient_cp_steps", "2", "--warmup_steps", "2",
                           "--warmup_lr", "4e-4", "--sft_coef", "1", "--actor_fraction", "0.25", "--reward", "bfcl",
                           "--temperature", "0.7", "--lr", "5e-5", "--kl_coef", "0", "--ppo_epoch", "1",
                           "--num_mini_batch", "1", "--max_new_tokens", "48", "--max_steps_per_turn", "3",
                           "--num_env_steps", "6", "--lora_r", "4", "--save_interval", "1", "--eval_interval", "0",
                           "--results_dir", str(tmp_path / "runs"), "--experiment_name", "mt", "--seed", "1",
                           "--no-progress"])
    run_dir = Runner(config, log=lambda message: None).run()
    metrics = read_metrics(run_dir)
    assert metrics and all(m["train/actor_grad_norm"] > 0 for m in metrics)
    # Several steps per episode: more actions than the group's episodes.
    assert sum(m["samples"] - before for m, before in zip(metrics, [0] + [m["samples"] for m in metrics])) > 2 * len(metrics)
    last = sorted((run_dir / "checkpoints").iterdir())[-1] / "actor"
    adapter = json.loads((last / "adapter_config.json").read_text())
    depth = AutoModelForCausalLM.from_pretrained(smollm2).config.num_hidden_layers
    assert adapter["layers_to_transform"] == list(range(depth - math.ceil(depth / 4), depth))
    client = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(smollm2), last)
    assert client.peft_config["default"].layers_to_transform == adapter["layers_to_transform"]
