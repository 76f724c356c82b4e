"""RL samples per second: our trainers (TPPO in three settings, GRPO) against TRL's
GRPOTrainer, side by side on CPU.

Same model (the embedded tiny model), same prompts (the bundled training split, rendered by
the env), same reward (the env's shaped reward), same batch (32 completions per optimizer
round), same LoRA adapter, learning rate, temperature, completion length and KL
coefficient. They run in alternating rounds in one process, with the same torch thread
count, so machine load affects both alike. A sample is one completion generated, scored
and trained on. TRL is a benchmark-only dependency (``pip install trl``).

Run: ``python -m bench.bench_grpo [--rounds 3 --steps 8] [--configs TPPO,GRPO] [--with_vllm]
[--out bench/results/grpo.json]`` (``--with_vllm``: also the default TPPO and our GRPO sampling
with the vllm rollout engine, ``make vllm``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]

BATCH = 32
GENERATIONS = 4  # GRPO's group size: 8 prompts x 4 completions per step
LR = 1e-3
KL = 0.02
MAX_NEW_TOKENS = 48


# Our configurations, each against TRL's GRPO. TRL with num_iterations=1 makes one pass
# over each batch and computes no old log-probs; our GRPO does the same work per sample.
OURS = {
    # The default: two PPO epochs of one minibatch (two actor and two critic updates per
    # batch), the critic's adapter on every layer, the old log-probs from the first epoch's pass.
    "TPPO": [],
    # The critic's adapter on the top quarter of the layers, starting from the reference
    # pass's states.
    "TPPO, top-quarter critic": ["--critic_fraction", "0.25"],
    # One pass over each batch, the amount of policy optimisation TRL's GRPO does, in two
    # minibatches (two optimizer steps, as the default), the top-quarter critic, and the old
    # log-probs from the sampling pass (the second minibatch's cannot come from the update).
    "TPPO, 1 epoch of 2 minibatches, top-quarter critic": ["--ppo_epoch", "1", "--num_mini_batch", "2",
                                                           "--critic_fraction", "0.25", "--sampling_old_logprobs"],
    # GRPO: groups of 4, no critic, one epoch, old log-probs from the sampling pass.
    "GRPO": ["--algorithm_name", "GRPO", "--group_size", str(GENERATIONS), "--ppo_epoch", "1",
             "--sampling_old_logprobs"],
}


# --with_vllm: the default TPPO and our GRPO again, sampling with the vllm rollout engine (make vllm).
WITH_VLLM = {f"{name}, vllm engine": [*OURS[name], "--rollout_engine", "vllm"] for name in ("TPPO", "GRPO")}


def ours_round(steps: int, seed: int, flags: list[str]) -> float:
    """Samples per second of our trainer over ``steps`` iterations (after one warm-up)."""
    from algos.config import parse_config
    from algos.training.loop import Runner

    with tempfile.TemporaryDirectory() as results:
        config = parse_config(["--results_dir", results, "--n_rollout_threads", str(BATCH), "--num_env_steps",
                               str(BATCH * (steps + 1)), "--lr", str(LR), "--kl_coef", str(KL),
                               "--max_new_tokens", str(MAX_NEW_TOKENS), "--eval_interval", "0",
                               "--save_interval", "100000", "--seed", str(seed), "--no-progress", "--torch_threads", "0",
                               *flags])
        runner = Runner(config, log=lambda message: None)
        try:
            runner.train_iteration()  # warm-up
            started = time.perf_counter()
            for _ in range(steps):
                runner.train_iteration()
            return steps * BATCH / (time.perf_counter() - started)
        finally:
            runner.engine.close()


def trl_round(steps: int, seed: int) -> float:
    """Samples per second of TRL's GRPOTrainer over ``steps`` steps (after one warm-up)."""
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from algos.model.loading import load_model
    from algos.model.policy import LoraSettings
    from algos.tiny.build import TINY_TRAIN
    from fcenv.trl import VerdictReward, prompt_dataset

    loaded = load_model("tiny", torch.device("cpu"))
    dataset = prompt_dataset(TINY_TRAIN, system_prompt=loaded.system_prompt)
    env_reward = VerdictReward(TINY_TRAIN, reward="shaped", system_prompt=loaded.system_prompt)

    class StepClock(TrainerCallback):
        def __init__(self):
            self.times: list[float] = []

        def on_step_end(self, args, state, control, **kwargs):
            self.times.append(time.perf_counter())

    clock = StepClock()
    with tempfile.TemporaryDirectory() as out:
        config = GRPOConfig(
            output_dir=out, use_cpu=True, bf16=False, per_device_train_batch_size=BATCH,
            num_generations=GENERATIONS, max_completion_length=MAX_NEW_TOKENS, temperature=1.0, top_k=0, top_p=1.0,
            learning_rate=LR, beta=KL, num_iterations=1, max_steps=steps + 1, logging_steps=1, report_to="none",
            save_strategy="no", gradient_checkpointing=False, disable_dropout=True, seed=seed,
            dataloader_num_workers=0)
        trainer = GRPOTrainer(model=loaded.base, reward_funcs=env_reward, args=config,
                              train_dataset=dataset, processing_class=loaded.tokenizer,
                              peft_config=LoraSettings(r=8, alpha=16, target_modules=[
                                  "q_proj", "k_proj", "v_proj", "o_proj"]).to_config(),
                              callbacks=[clock])
        trainer.train()
    return steps * BATCH / (clock.times[-1] - clock.times[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=8, help="timed optimizer rounds per side per round")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "grpo.json"))
    parser.add_argument("--configs", default="", help="comma-separated names of our configurations to run "
                                                       f"(default: all of {', '.join(OURS)})")
    parser.add_argument("--with_vllm", action="store_true", help="also the default TPPO and our GRPO with "
                                                                 "--rollout_engine vllm")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.configs.split(",") if name.strip()] or list(OURS)
    unknown = [name for name in chosen if name not in OURS]
    if unknown:
        parser.error(f"--configs: unknown {unknown}; choose from {list(OURS)}")
    ours = {name: OURS[name] for name in chosen} | (WITH_VLLM if args.with_vllm else {})
    torch.set_num_threads(args.threads)
    rates: dict[str, list[float]] = {name: [] for name in [*ours, "TRL GRPO"]}
    for round_index in range(args.rounds):
        for name, flags in ours.items():
            rates[name].append(ours_round(args.steps, seed=round_index, flags=flags))
        rates["TRL GRPO"].append(trl_round(args.steps, seed=round_index))
        print(f"round {round_index + 1}: " + ", ".join(f"{name} {values[-1]:.1f}" for name, values in rates.items())
              + " samples/s", flush=True)
    trl = statistics.median(rates["TRL GRPO"])
    report = {"samples_per_second": rates,
              "median": {name: statistics.median(values) for name, values in rates.items()},
              "against_trl": {name: statistics.median(values) / trl for name, values in rates.items()},
              "flags": ours, "batch": BATCH, "steps_per_round": args.steps, "threads": args.threads,
              "trl_version": __import__("trl").__version__}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print("median samples/s: " + ", ".join(f"{name} {report['median'][name]:.1f} (x{report['against_trl'][name]:.2f})"
                                           for name in rates))
    return 0


if __name__ == "__main__":
    sys.exit(main())
