"""Held-out BFCL accuracy after TRL's GRPOTrainer on the multi-turn default, through
``fcenv.trl.EpisodeRollout`` (TRL's ``rollout_func``: whole episodes, tool results and later
user turns between the steps, env tokens masked), measured by the same independent client as
our runs (``bench/heldout.py``), for the same number of samples.

TRL trains a fresh LoRA adapter on the base model of a multi-turn run of ours, with that run's
tasks (the training split), system prompt, reward, LoRA, constant learning rate, temperature 1
without top-k/top-p, tokens per action (``max_new_tokens``, one step's bound), KL coefficient,
clip range, gradient clipping and passes over each batch (``ppo_epoch`` as TRL's
``num_iterations``), in batches of 8 tasks x 4 episodes as our GRPO plays them, until it has
taken as many actions as the run (``num_env_steps``). Its adapter becomes the last checkpoint of
a run folder laid out like ours, whose first checkpoint is the run's start, and
``bench/heldout.py`` measures both, greedy and sampled, on the run's held-out tasks.

Run: ``python -m bench.bench_trl_multi_turn RUN_DIR [--seeds 1 2 3] [--out FILE]`` with RUN_DIR a
run of ``python train_fctncalling.py --dataset_path multi_turn_train --algorithm_name GRPO
--group_size 4``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_grpo import SETUPS
from bench.bench_trl_heldout import run_folder

BATCH, GENERATIONS = SETUPS["tiny"].batch, SETUPS["tiny"].group  # bench_grpo's tiny setup

ROOT = Path(__file__).resolve().parents[1]


def train_trl(run_dir: Path, seed: int, out: Path) -> dict:
    """TRL's GRPO through EpisodeRollout on the run's base, tasks and settings; the adapter
    saved in ``out``. Returns the training's wall time, steps and actions."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback, set_seed
    from trl import GRPOConfig, GRPOTrainer

    from fcenv.algos.model.policy import LoraSettings
    from fcenv.trl import EpisodeRollout, episode_dataset

    saved = json.loads((run_dir / "args.json").read_text())
    resolved = saved["resolved"]
    # GRPOTrainer wraps the model in its LoRA adapter before it seeds: seed first, so that the
    # adapter's initial weights are the seed's too.
    set_seed(seed)
    torch.set_num_threads(max(1, int(saved.get("torch_threads") or 1)))
    base = AutoModelForCausalLM.from_pretrained(resolved["base_model"], dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(resolved["base_model"])
    settings = {"system_prompt": resolved["system_prompt"], "reward": saved["reward"]}
    rollout = EpisodeRollout(resolved["train_path"], max_step_tokens=int(saved["max_new_tokens"]), **settings)
    dataset = episode_dataset(resolved["train_path"], **settings)
    target = int(saved["num_env_steps"])

    class StopAtSamples(TrainerCallback):
        """Ends training once the rollouts have taken the run's number of actions, as ours does,
        after the last batch's passes (``num_iterations`` steps per batch)."""

        def on_step_end(self, args, state, control, **kwargs):
            passes = args.num_iterations * args.steps_per_generation
            control.should_training_stop = rollout.actions >= target and state.global_step % passes == 0

    window = int(resolved.get("context_window") or base.config.max_position_embeddings)
    with tempfile.TemporaryDirectory() as scratch:
        config = GRPOConfig(
            output_dir=scratch, use_cpu=True, bf16=False, per_device_train_batch_size=BATCH,
            num_generations=GENERATIONS, max_completion_length=window, temperature=float(saved["temperature"]),
            top_k=0, top_p=1.0, learning_rate=float(saved["lr"]), lr_scheduler_type="constant",
            beta=float(saved["kl_coef"]), epsilon=float(saved["clip_param"]),
            num_iterations=int(saved["ppo_epoch"]), max_steps=target, max_grad_norm=float(saved["max_grad_norm"]),
            logging_steps=10, report_to="none", save_strategy="no", gradient_checkpointing=False,
            disable_dropout=True, seed=seed, dataloader_num_workers=0)
        lora = LoraSettings(r=int(saved["lora_r"]), alpha=int(saved["lora_alpha"]),
                            target_modules=list(saved["lora_target_modules"]))
        trainer = GRPOTrainer(model=base, reward_funcs=rollout.reward_func, args=config, train_dataset=dataset,
                              processing_class=tokenizer, peft_config=lora.to_config(), rollout_func=rollout,
                              callbacks=[StopAtSamples()])
        started = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - started
    trainer.model.save_pretrained(out)
    return {"train_seconds": round(seconds, 1), "steps": trainer.state.global_step, "actions": rollout.actions,
            "episodes": len(rollout.outcomes), "train_accuracy_last_500": sum(
                o["valid"] for o in rollout.outcomes[-500:]) / max(1, len(rollout.outcomes[-500:]))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a multi-turn run of train_fctncalling.py")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--samples", type=int, default=4, help="sampled answers per held-out task (client)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "trl_multi_turn_heldout.json")
    args = parser.parse_args(argv)
    report = []
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as home:
            folder = run_folder(args.run_dir, Path(home))
            trained = train_trl(args.run_dir, seed, folder / "checkpoints" / "iter_999999" / "actor")
            measured = Path(home) / "heldout.json"
            subprocess.run([sys.executable, "-m", "bench.heldout", str(folder), "--samples",
                            str(args.samples), "--out", str(measured)], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            start, end = json.loads(measured.read_text())["reports"]
        report.append({"seed": seed, **trained, "start": start, "end": end})
        print(f"seed {seed}: {trained['train_seconds'] / 60:.1f} min, {trained['steps']} steps, "
              f"{trained['actions']} actions; held-out greedy {start['greedy_accuracy']:.3f} -> "
              f"{end['greedy_accuracy']:.3f}, sampled {start['sampled_accuracy']:.3f} -> {end['sampled_accuracy']:.3f}",
              flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"run": str(args.run_dir), "trl_version": __import__("trl").__version__,
                                        "runs": report}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
