"""Length-sorted micro-batches against one padded batch: the update's time on both defaults.

Runs ``train_fctncalling.py`` for a few iterations with ``--micro_batch_tokens 0`` (every row
of a minibatch padded to the longest context plus the longest action) and with the default
(rows of similar length batched together), taking turns, and reports the seconds spent
scoring and updating per iteration (the fastest pass of each side) and whether the rollout
rewards agree (the update is the same up to float rounding, so the runs should stay
together for the first iterations).

Run: ``python -m bench.bench_micro_batches [--iterations 8] [--passes 2]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from fcenv.algos.store.results import read_metrics

ROOT = Path(__file__).resolve().parents[1]

DEFAULTS = {"single-turn": [], "multi-turn": ["--dataset_path", "multi_turn_train"]}


def timed_run(flags: list[str], budget: int, iterations: int, results: Path) -> dict:
    folder = results / f"run{len(list(results.iterdir()))}"
    threads = 32
    subprocess.run([sys.executable, str(ROOT / "train_fctncalling.py"), *flags, "--micro_batch_tokens", str(budget),
                    "--num_env_steps", str(threads * iterations), "--eval_interval", "0", "--no-progress",
                    "--results_dir", str(folder)], cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    (run_dir,) = folder.glob("*/*/*/*/run1")
    rows = [m for m in read_metrics(run_dir) if "perf/update_seconds" in m]
    return {"iterations": len(rows),
            "update_seconds": sum(m["perf/update_seconds"] for m in rows) / len(rows),
            "iteration_seconds": sum(m["perf/iteration_seconds"] for m in rows) / len(rows),
            "rewards": [round(m["rollout/reward"], 4) for m in rows]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--passes", type=int, default=2)
    args = parser.parse_args(argv)
    report = {}
    with tempfile.TemporaryDirectory() as scratch:
        results = Path(scratch)
        for name, flags in DEFAULTS.items():
            best: dict[int, dict] = {}
            for _ in range(args.passes):
                for budget in (0, 2048):
                    run = timed_run(flags, budget, args.iterations, results)
                    if budget not in best or run["update_seconds"] < best[budget]["update_seconds"]:
                        best[budget] = run
            padded, sorted_ = best[0], best[2048]
            same = sum(a == b for a, b in zip(padded["rewards"], sorted_["rewards"]))
            report[name] = {"one_padded_batch": padded, "length_sorted": sorted_,
                            "update_speedup": padded["update_seconds"] / sorted_["update_seconds"],
                            "iteration_speedup": padded["iteration_seconds"] / sorted_["iteration_seconds"]}
            print(f"{name}: update {padded['update_seconds']:.2f} -> {sorted_['update_seconds']:.2f} s per iteration "
                  f"({report[name]['update_speedup']:.2f}x), whole iteration {padded['iteration_seconds']:.2f} -> "
                  f"{sorted_['iteration_seconds']:.2f} s ({report[name]['iteration_speedup']:.2f}x); rollout rewards "
                  f"equal in {same} of {len(padded['rewards'])} iterations", flush=True)
    out = ROOT / "bench" / "results" / "micro_batches.json"
    out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
