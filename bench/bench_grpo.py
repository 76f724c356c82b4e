"""RL samples per second: our trainers (TPPO in three settings, GRPO) against TRL's
GRPOTrainer, side by side on CPU.

Same model, same prompts (the training split, rendered by the env), same reward (the env's),
same batch (completions per optimizer round), same group size, same LoRA adapter, learning
rate, temperature, completion length and KL coefficient. They take turns, each side's round in
a fresh process of its own (so its peak memory is its own), with the same torch thread count, so
machine load affects both alike. A sample is one completion generated, scored and trained on.
TRL is a benchmark-only dependency (``pip install trl``); it generates with ``transformers``
(its vLLM modes need vLLM importable in the trainer's own environment, which the CPU build's
separate venv is not).

Two setups (``--setup``):

- ``tiny`` (default): the embedded tiny model in prompting mode on ``tiny_train``, the
  shaped reward, 32 completions in groups of 4;
- ``qwen``: Qwen2.5-Coder-0.5B-Instruct (``make models``) in FC mode (hermes) on
  ``varied_train``, BFCL's verdict as the reward, 16 completions in groups of 8 at T 0.7 (the
  ``make train-real`` recipe without its warm-up, and without the ``<tool_call>`` rows trained
  whole, which TRL cannot train: see ``SETUPS``).

Run: ``python -m bench.bench_grpo [--setup tiny|qwen] [--rounds 3 --steps 8] [--configs TPPO,GRPO]
[--with_vllm] [--out bench/results/grpo.json]`` (``--with_vllm``: also the default TPPO and our
GRPO sampling with the vllm rollout engine, ``make vllm``).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
QWEN = Path.home() / ".cache" / "fcenv" / "models" / "qwen2.5-coder-0.5b-instruct"


@dataclass(frozen=True)
class Setup:
    """What both sides train on: the model, data, reward and batch shape."""

    batch: int  # completions per optimizer round
    group: int  # GRPO's group size
    lr: float
    kl: float
    max_new_tokens: int
    reward: str
    dataset: str
    temperature: float = 1.0
    model_flags: list[str] = field(default_factory=list)  # our trainer's model and format flags
    tool_format: str | None = None  # FC mode
    micro_batches: int = 1  # forward and backward passes per optimizer round (ours: --gradient_cp_steps)


SETUPS = {
    "tiny": Setup(batch=32, group=4, lr=1e-3, kl=0.02, max_new_tokens=48, reward="shaped", dataset="tiny_train"),
    # No token rows trained whole on either side: TRL 1.16's GRPOTrainer replaces the output
    # layer's forward with a fused one that reads ``lm_head.bias``, which PEFT's trainable-token
    # wrapper does not have, so it cannot train them (its first step fails). Their cost is
    # 2 x 2 x 896 parameters against the adapter's, so samples/s compare alike without them.
    "qwen": Setup(batch=16, group=8, lr=5e-5, kl=0.0, max_new_tokens=128, reward="bfcl", dataset="varied_train",
                  temperature=0.7, tool_format="hermes", micro_batches=2,
                  model_flags=["--model_name_or_path", str(QWEN), "--tool_format", "hermes", "--gradient_cp_steps", "2"]),
}


def our_configs(group: int) -> dict[str, list[str]]:
    """Our configurations, each against TRL's GRPO. TRL with num_iterations=1 makes one pass
    over each batch and computes no old log-probs; our GRPO does the same work per sample."""
    return {
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
        # GRPO: no critic, one epoch, old log-probs from the sampling pass.
        "GRPO": ["--algorithm_name", "GRPO", "--group_size", str(group), "--ppo_epoch", "1",
                 "--sampling_old_logprobs"],
    }


def ours_round(setup: Setup, steps: int, seed: int, flags: list[str]) -> dict[str, float]:
    """Samples per second of our trainer over ``steps`` iterations (after one warm-up), and the
    mean seconds of an iteration's rollout and of its scoring plus update."""
    from fcenv.algos.config import parse_config
    from fcenv.algos.training.loop import Runner

    with tempfile.TemporaryDirectory() as results:
        config = parse_config(["--results_dir", results, "--n_rollout_threads", str(setup.batch), "--num_env_steps",
                               str(setup.batch * (steps + 1)), "--lr", str(setup.lr), "--kl_coef", str(setup.kl),
                               "--max_new_tokens", str(setup.max_new_tokens), "--temperature", str(setup.temperature),
                               "--dataset_path", setup.dataset, "--reward", setup.reward, "--eval_interval", "0",
                               "--save_interval", "100000", "--seed", str(seed), "--no-progress", "--torch_threads", "0",
                               *setup.model_flags, *flags])
        runner = Runner(config, log=lambda message: None)
        try:
            runner.train_iteration()  # warm-up
            started = time.perf_counter()
            phases = [runner.train_iteration() for _ in range(steps)]
            seconds = time.perf_counter() - started
        finally:
            runner.engine.close()
    # Where an iteration's time goes: sampling (and env steps), then scoring plus the update.
    return {"samples_per_second": steps * setup.batch / seconds,
            "rollout_seconds": statistics.mean(m["perf/rollout_seconds"] for m in phases),
            "update_seconds": statistics.mean(m["perf/iteration_seconds"] - m["perf/rollout_seconds"] for m in phases)}


def trl_round(setup: Setup, steps: int, seed: int) -> dict[str, float]:
    """Samples per second of TRL's GRPOTrainer over ``steps`` steps (after one warm-up)."""
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from fcenv.algos.model.policy import LoraSettings
    from fcenv.trl import VerdictReward, prompt_dataset

    if setup.tool_format is None:  # the tiny model, prompting mode
        from fcenv.algos.model.loading import load_model

        loaded = load_model("tiny", torch.device("cpu"))
        model, tokenizer = loaded.base, loaded.tokenizer
        dataset = prompt_dataset(setup.dataset, system_prompt=loaded.system_prompt)
        env_reward = VerdictReward(setup.dataset, reward=setup.reward, system_prompt=loaded.system_prompt)
    else:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(QWEN)
        model = AutoModelForCausalLM.from_pretrained(QWEN, dtype=torch.float32)
        dataset = prompt_dataset(setup.dataset, tool_format=setup.tool_format, renderer=tokenizer)
        env_reward = VerdictReward(setup.dataset, reward=setup.reward, tool_format=setup.tool_format)
    lora = LoraSettings(r=8, alpha=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]).to_config()

    class StepClock(TrainerCallback):
        def __init__(self):
            self.times: list[float] = []

        def on_step_end(self, args, state, control, **kwargs):
            self.times.append(time.perf_counter())

    clock = StepClock()
    with tempfile.TemporaryDirectory() as out:
        config = GRPOConfig(
            # One optimizer step per batch, in the same micro-batches as ours: 16 completions of
            # 128 tokens in one pass of this model take more than a 24 GB machine has.
            output_dir=out, use_cpu=True, bf16=False, per_device_train_batch_size=setup.batch // setup.micro_batches,
            gradient_accumulation_steps=setup.micro_batches,
            num_generations=setup.group, max_completion_length=setup.max_new_tokens, temperature=setup.temperature,
            top_k=0, top_p=1.0, learning_rate=setup.lr, beta=setup.kl, num_iterations=1, max_steps=steps + 1,
            logging_steps=1, report_to="none", save_strategy="no", gradient_checkpointing=False, disable_dropout=True,
            seed=seed, dataloader_num_workers=0)
        trainer = GRPOTrainer(model=model, reward_funcs=env_reward, args=config, train_dataset=dataset,
                              processing_class=tokenizer, peft_config=lora, callbacks=[clock])
        trainer.train()
    return {"samples_per_second": steps * setup.batch / (clock.times[-1] - clock.times[0])}


def run_side(setup_name: str, side: str, flags: list[str] | None, steps: int, seed: int, threads: int) -> dict[str, float]:
    """One side's round in a process of its own (``--side``): each side starts from a clean
    process, and its peak resident memory is its own (the trainer's process; a vLLM engine's
    worker process is not counted)."""
    torch.set_num_threads(threads)
    setup = SETUPS[setup_name]
    figures = trl_round(setup, steps, seed) if flags is None else ours_round(setup, steps, seed, flags)
    return {**figures, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--setup", choices=sorted(SETUPS), default="tiny",
                        help="the model, data, reward and batch both sides train on")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=8, help="timed optimizer rounds per side per round")
    parser.add_argument("--torch_threads", type=int, default=1, help="CPU threads for torch, each side")
    parser.add_argument("--out", default=None, help="default: bench/results/grpo.json (tiny), grpo_qwen.json (qwen)")
    parser.add_argument("--configs", default="", help="comma-separated names of our configurations to run "
                                                       f"(default: all of {', '.join(our_configs(4))})")
    parser.add_argument("--with_vllm", action="store_true", help="also the default TPPO and our GRPO with "
                                                                 "--rollout_engine vllm")
    parser.add_argument("--side", default="", help=argparse.SUPPRESS)  # one side's round, in its own process
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    setup = SETUPS[args.setup]
    if args.setup == "qwen" and not (QWEN / "config.json").is_file():
        parser.error(f"--setup qwen: {QWEN} is missing (`make models` fetches it)")
    configs = our_configs(setup.group)
    chosen = [name.strip() for name in args.configs.split(",") if name.strip()] or list(configs)
    unknown = [name for name in chosen if name not in configs]
    if unknown:
        parser.error(f"--configs: unknown {unknown}; choose from {list(configs)}")
    # --with_vllm: the default TPPO and our GRPO again, sampling with the vllm rollout engine (make vllm).
    with_vllm = {f"{name}, vllm engine": [*configs[name], "--rollout_engine", "vllm"] for name in ("TPPO", "GRPO")}
    ours = {name: configs[name] for name in chosen} | (with_vllm if args.with_vllm else {})
    if args.side:
        figures = run_side(args.setup, args.side, ours.get(args.side), args.steps, args.seed, args.torch_threads)
        print(json.dumps(figures))
        return 0
    out = Path(args.out or ROOT / "bench" / "results" / ("grpo.json" if args.setup == "tiny" else "grpo_qwen.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    sides = [*ours, "TRL GRPO"]
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
    for round_index in range(args.rounds):
        for name in sides:
            done = subprocess.run([sys.executable, "-m", "bench.bench_grpo", *(argv if argv is not None else sys.argv[1:]),
                                   "--side", name, "--seed", str(round_index)], cwd=ROOT, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"{name}, round {round_index + 1}: exit status {done.returncode}\n{done.stderr[-3000:]}")
            rounds[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"round {round_index + 1}, {name}: " + ", ".join(f"{k} {v:.2f}" for k, v in rounds[name][-1].items()),
                  flush=True)
            report = write_report(out, args, setup, ours, rounds)  # what is measured survives a later failure
    print("median samples/s: " + ", ".join(f"{name} {report['median'][name]:.2f} (x{report['against_trl'][name]:.2f})"
                                           for name in sides))
    return 0


def write_report(out: Path, args: argparse.Namespace, setup: Setup, ours: dict[str, list[str]],
                 rounds: dict[str, list[dict[str, float]]]) -> dict:
    rates = {name: [r["samples_per_second"] for r in measured] for name, measured in rounds.items() if measured}
    trl = statistics.median(rates["TRL GRPO"]) if "TRL GRPO" in rates else None
    report = {"samples_per_second": rates,
              "median": {name: statistics.median(values) for name, values in rates.items()},
              "against_trl": {name: statistics.median(values) / trl for name, values in rates.items()} if trl else {},
              "peak_rss_mb": {name: max(r["peak_rss_mb"] for r in measured) for name, measured in rounds.items() if measured},
              "phase_seconds": {name: {phase: statistics.median(r[phase] for r in measured)
                                       for phase in ("rollout_seconds", "update_seconds") if phase in measured[0]}
                                for name, measured in rounds.items() if measured},
              "flags": ours, "model": args.setup, "batch": setup.batch, "group": setup.group,
              "max_new_tokens": setup.max_new_tokens, "steps_per_round": args.steps, "threads": args.torch_threads,
              "trl_version": __import__("trl").__version__}
    out.write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    sys.exit(main())
