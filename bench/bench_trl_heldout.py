"""Held-out BFCL accuracy after TRL's GRPOTrainer, measured by the same independent client as
our runs (``bench/heldout.py``), for the same number of samples.

TRL trains a fresh LoRA adapter on the base model of a run of ours, with that run's prompts
(the training split, rendered by the env), reward (the env's shaped reward), samples
(``num_env_steps``: 6,400 for the default, in batches of 32 = 8 prompts x 4 completions), LoRA
(r 8, alpha 16, q/k/v/o), constant learning rate, temperature 1 without top-k/top-p,
completion length and KL coefficient. Its adapter is then written as the last checkpoint of a
run folder laid out like ours, whose first checkpoint is the run's start (a fresh adapter:
LoRA's B starts at zero, so both starts are the base model itself), and ``bench/heldout.py``
measures start and end: greedy and sampled, on the run's held-out tasks.

Run: ``python -m bench.bench_trl_heldout RUN_DIR [--seeds 1 2 3] [--out bench/results/trl_heldout.json]``
with RUN_DIR a single-turn run of ``train_fctncalling.py`` (e.g. ``results/default/tiny-llama/
tiny_train/TPPO/run1`` after ``make train``). TRL is a benchmark-only dependency.
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

BATCH, GENERATIONS = SETUPS["tiny"].batch, SETUPS["tiny"].group  # bench_grpo's tiny setup

ROOT = Path(__file__).resolve().parents[1]


def train_trl(run_dir: Path, seed: int, out: Path) -> float:
    """TRL's GRPO on the run's base, prompts and settings; the adapter saved in ``out``.
    Returns the training's wall time in seconds."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from fcenv.algos.model.policy import LoraSettings
    from fcenv.trl import VerdictReward, prompt_dataset

    saved = json.loads((run_dir / "args.json").read_text())
    resolved = saved["resolved"]
    # The run's thread count (ours use one per process): more threads than cores, with other
    # work on the machine, slow a small model down many times over.
    torch.set_num_threads(max(1, int(saved.get("torch_threads") or 1)))
    base = AutoModelForCausalLM.from_pretrained(resolved["base_model"], dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(resolved["base_model"])
    dataset = prompt_dataset(resolved["train_path"], system_prompt=resolved["system_prompt"])
    reward = VerdictReward(resolved["train_path"], reward=saved["reward"], system_prompt=resolved["system_prompt"])
    steps = int(saved["num_env_steps"]) // BATCH
    with tempfile.TemporaryDirectory() as scratch:
        config = GRPOConfig(
            output_dir=scratch, use_cpu=True, bf16=False, per_device_train_batch_size=BATCH,
            num_generations=GENERATIONS, max_completion_length=int(saved["max_new_tokens"]),
            temperature=float(saved["temperature"]), top_k=0, top_p=1.0, learning_rate=float(saved["lr"]),
            lr_scheduler_type="constant", beta=float(saved["kl_coef"]), num_iterations=1, max_steps=steps,
            max_grad_norm=float(saved["max_grad_norm"]), logging_steps=10, report_to="none", save_strategy="no",
            gradient_checkpointing=False, disable_dropout=True, seed=seed, dataloader_num_workers=0)
        lora = LoraSettings(r=int(saved["lora_r"]), alpha=int(saved["lora_alpha"]),
                            target_modules=list(saved["lora_target_modules"]))
        trainer = GRPOTrainer(model=base, reward_funcs=reward, args=config, train_dataset=dataset,
                              processing_class=tokenizer, peft_config=lora.to_config())
        started = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - started
    trainer.model.save_pretrained(out)
    return seconds


def run_folder(run_dir: Path, adapter_home: Path) -> Path:
    """A run folder for ``bench/heldout.py``: the run's arguments, its start checkpoint, and
    TRL's adapter as the last checkpoint."""
    folder = adapter_home / "run"
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "args.json").write_text((run_dir / "args.json").read_text())
    (folder / "checkpoints" / "iter_000000").symlink_to((run_dir / "checkpoints" / "iter_000000").resolve())
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a single-turn run of train_fctncalling.py")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--samples", type=int, default=4, help="sampled answers per held-out task (client)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "trl_heldout.json")
    args = parser.parse_args(argv)
    report = []
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as home:
            folder = run_folder(args.run_dir, Path(home))
            seconds = train_trl(args.run_dir, seed, folder / "checkpoints" / "iter_999999" / "actor")
            measured = Path(home) / "heldout.json"
            subprocess.run([sys.executable, "-m", "bench.heldout", str(folder), "--samples",
                            str(args.samples), "--out", str(measured)], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            start, end = json.loads(measured.read_text())["reports"]
        report.append({"seed": seed, "train_seconds": round(seconds, 1), "start": start, "end": end})
        print(f"seed {seed}: {seconds / 60:.1f} min; held-out greedy {start['greedy_accuracy']:.3f} -> "
              f"{end['greedy_accuracy']:.3f}, sampled {start['sampled_accuracy']:.3f} -> {end['sampled_accuracy']:.3f}",
              flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"run": str(args.run_dir), "trl_version": __import__("trl").__version__,
                                    "runs": report}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
