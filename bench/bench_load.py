"""Load: a vector env of multi-turn envs stepping for a long time; throughput and memory.

Run: ``python -m bench.bench_load [--num_envs 64] [--steps 10000] [--warmup 1000]
[--sample_every 250] [--mode sync|async] [--dataset multi_turn_base] [--max_growth_mib 32]``.

``gym.make_vec("fcenv/FunctionCalling-v0", num_envs=N, dataset_path=<multi-turn file>,
reward="shaped")`` steps ``--steps`` times with a realistic mix of actions per episode
(ground truth, perturbed ground truth, wrong calls and prose; see ``run_load`` in
tests/env/test_load.py), so episodes end and the vector env resets them. The async env runs with
``shared_memory=False`` (text observations travel through the workers' pipes).

Prints throughput after warm-up (env steps that took an action per second, and vector steps
per second), episodes, and resident memory (this process plus the async workers, after a
garbage collection): at the start, after warm-up and at the end, the largest growth after
warm-up and its least-squares slope. Exits 1 if memory grew by more than
``--max_growth_mib`` after warm-up.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from fcenv.bfcl_data import DEFAULT_DIR as BFCL_DEFAULT_DIR
from fcenv.flags import SAMPLING, add_group
from harness.load import run_load

ROOT = Path(__file__).resolve().parents[1]


def dataset_path(name: str) -> Path:
    given = Path(name)
    if given.exists():
        return given.resolve()
    for folder in (ROOT.parent / "shared" / "bfcl", ROOT / "datasets" / "bfcl", BFCL_DEFAULT_DIR):
        path = folder / f"BFCL_v4_{name}.json"
        if path.exists():
            return path
    raise SystemExit(f"no dataset {name!r}: give a path or a multi-turn category such as multi_turn_base")


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num_envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=10_000, help="vector steps")
    parser.add_argument("--warmup", type=int, default=1_000, help="vector steps before throughput and memory count")
    parser.add_argument("--sample_every", type=int, default=250)
    parser.add_argument("--mode", choices=("sync", "async"), default="sync")
    parser.add_argument("--dataset", default="multi_turn_base", help="a multi-turn BFCL file or category")
    parser.add_argument("--max_growth_mib", type=float, default=32.0, help="allowed RSS growth after warm-up")
    add_group(parser, SAMPLING, skip=["temperature", "greedy", "max_new_tokens", "context_window"], defaults={"seed": 0})
    args = parser.parse_args()
    if not 0 < args.warmup < args.steps:
        parser.error("--warmup must be between 0 and --steps")

    path = dataset_path(args.dataset)
    began = time.perf_counter()

    def progress(step: int, report) -> None:
        if step % (args.sample_every * 8) == 0:
            print(f"  step {step:>6}: RSS {report.samples[-1][1]:8.1f} MiB, {time.perf_counter() - began:7.1f} s",
                  flush=True)

    print(f"{args.mode} vector env: {args.num_envs} x {path.name}, {args.steps} vector steps "
          f"({args.warmup} warm-up)")
    report = run_load(path, num_envs=args.num_envs, steps=args.steps, warmup=args.warmup,
                      sample_every=args.sample_every, mode=args.mode, seed=args.seed, progress=progress)
    measured = args.steps - args.warmup
    print(f"\nthroughput after warm-up: {report.actions / report.seconds:,.0f} env steps/s, "
          f"{measured / report.seconds:,.1f} vector steps/s ({report.actions} env steps in {report.seconds:.1f} s)")
    print(f"episodes ended (and reset): {report.episodes}; mean reward per step "
          f"{report.reward_sum / max(report.rewarded, 1):.3f} in [{report.reward_min:.3f}, {report.reward_max:.3f}]")
    print(f"RSS: start {report.rss_start:.1f} MiB, after warm-up {report.rss_after_warmup:.1f} MiB, "
          f"end {report.rss_end:.1f} MiB")
    print(f"growth after warm-up: {report.growth_after_warmup:.1f} MiB (bound {args.max_growth_mib:.0f}); "
          f"slope {report.slope:+.2f} MiB per 1,000 vector steps")
    print("samples (vector step: MiB): " + ", ".join(f"{s}: {m:.1f}" for s, m in report.samples[::4]))
    if report.growth_after_warmup > args.max_growth_mib:
        print("FAIL: memory grew beyond the bound after warm-up")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
