"""Where the PPO ratio's old log-probs come from: recomputed in a scoring pass, kept from the
sampling pass (``--sampling_old_logprobs``), or recorded by the update's first pass (the
default with one minibatch per epoch). The time of a training iteration and of the scoring
step, on both embedded defaults, the settings taking turns in one process.

Run: ``python -m bench.bench_old_logprobs [--rounds 3 --iterations 5]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DEFAULTS = {"single-turn": [], "multi-turn": ["--dataset_path", "multi_turn_train"]}
SOURCES = {"rescored": "rescore", "sampling pass": "sampling", "update's first pass": "update"}


def measure(flags: list[str], source: str, iterations: int) -> dict[str, float]:
    """Seconds per iteration and per scoring step (the median over ``iterations``)."""
    from fcenv.algos.config import parse_config
    from fcenv.algos.ppo.buffer import score_rollout
    from fcenv.algos.rollout.play import play
    from fcenv.algos.training.loop import Runner

    with tempfile.TemporaryDirectory() as results:
        extra = ["--sampling_old_logprobs"] if source == "sampling" else []
        runner = Runner(parse_config(["--results_dir", results, "--eval_interval", "0", "--save_interval", "100000",
                                      "--no-progress", *flags, *extra]), log=lambda message: None)
        runner._old_logprobs_from = lambda: source  # the default picks "update"; the bench also times the others
        runner.train_iteration()  # warm-up
        iteration, scoring = [], []
        for _ in range(iterations):
            started = time.perf_counter()
            runner.train_iteration()
            iteration.append(time.perf_counter() - started)
            c = runner.config
            rollout = play(runner.envs, runner.engine, runner.codec, runner._task_source(),
                           max_new_tokens=c.max_new_tokens, actions_per_env=1, generator=runner.sampling)
            started = time.perf_counter()
            score_rollout(runner.policy, rollout, c.micro_batch_tokens, with_reference=c.kl_coef != 0, old_from=source)
            scoring.append(time.perf_counter() - started)
        return {"iteration": statistics.median(iteration), "scoring": statistics.median(scoring)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "old_logprobs.json"))
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    report = {}
    for name, flags in DEFAULTS.items():
        best = {label: {"iteration": float("inf"), "scoring": float("inf")} for label in SOURCES}
        for _ in range(args.rounds):
            for label, source in SOURCES.items():
                figures = measure(flags, source, args.iterations)
                best[label] = {k: min(best[label][k], v) for k, v in figures.items()}
        report[name] = best
        print(f"{name} (fastest round's median): " + ", ".join(
            f"{label}: iteration {best[label]['iteration']:.3f} s, scoring {best[label]['scoring']:.3f} s"
            for label in SOURCES), flush=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
