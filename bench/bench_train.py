"""The plain ``python train_fctncalling.py`` (the embedded default), timed, for several seeds.

Runs one seed after another (so each run has the machine to itself) and reports each run's
wall time and the mean reward of the first and last quarter of its RL iterations; the goal
is at most 10 minutes on 2 CPU cores and a gain of at least 0.1 for seeds 1, 2 and 3. The
first run may include building the tiny model and tokenizer when the cache is empty.

Run: ``python bench/bench_train.py [--seeds 1 2 3] [--out bench/results/train.json]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from algos.results import read_metrics  # noqa: E402
from bench.bench_curves import quarter_means  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "train.json"))
    args = parser.parse_args(argv)
    report = []
    with tempfile.TemporaryDirectory() as results:
        for seed in args.seeds:
            started = time.perf_counter()
            subprocess.run([sys.executable, str(ROOT / "train_fctncalling.py"), "--seed", str(seed),
                            "--results_dir", results, "--experiment_name", f"seed{seed}", "--no-progress"],
                           cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            seconds = time.perf_counter() - started
            (run_dir,) = Path(results, f"seed{seed}").glob("*/*/*/run1")
            rewards = [m["rollout/reward"] for m in read_metrics(run_dir) if "rollout/reward" in m]
            first, last = quarter_means(rewards)
            report.append({"seed": seed, "seconds": seconds, "iterations": len(rewards),
                           "first_quarter": first, "last_quarter": last, "gain": last - first})
            print(f"seed {seed}: {seconds / 60:.1f} min, {len(rewards)} iterations, reward {first:.3f} -> "
                  f"{last:.3f} (gain {last - first:+.3f})", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
