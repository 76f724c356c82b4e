"""TPPO against APPO: reward against samples on the bundled dataset, several seeds.

Runs ``train_fctncalling.py`` (the embedded default, any extra flags appended) once per
algorithm and seed, a few runs at a time, then writes ``curves.json`` (every run's reward
per iteration, first- and last-quarter means) and ``curves.png`` (mean over seeds of the
moving-average reward, with the seeds' range shaded).

Run: ``python bench/bench_curves.py [--seeds 1 2 3] [--parallel 2] [-- extra training flags]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from algos.results import read_metrics


def quarter_means(values: list[float]) -> tuple[float, float]:
    quarter = max(1, len(values) // 4)
    return float(np.mean(values[:quarter])), float(np.mean(values[-quarter:]))


def launch(algorithm: str, seed: int, results: Path, extra: list[str]) -> subprocess.Popen:
    command = [sys.executable, str(ROOT / "train_fctncalling.py"), "--algorithm_name", algorithm, "--seed", str(seed),
               "--experiment_name", "curves", "--results_dir", str(results / f"{algorithm}_seed{seed}"),
               "--no-progress", *extra]
    with open(results / f"{algorithm}_seed{seed}.log", "w") as log:  # the child keeps its own copy
        return subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)


def moving_average(values: np.ndarray, window: int) -> np.ndarray:
    if len(values) < window:
        return values
    kernel = np.ones(window) / window
    head = np.array([values[: i + 1].mean() for i in range(window - 1)])
    return np.concatenate([head, np.convolve(values, kernel, mode="valid")])


def plot(runs: dict, path: Path, window: int) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axis = plt.subplots(figsize=(7, 4.2))
    for algorithm, color in (("TPPO", "tab:blue"), ("APPO", "tab:orange")):
        series = [r for r in runs.values() if r["algorithm"] == algorithm]
        if not series:
            continue
        length = min(len(r["reward"]) for r in series)
        samples = np.array(series[0]["samples"][:length])
        smooth = np.stack([moving_average(np.array(r["reward"][:length]), window) for r in series])
        axis.plot(samples, smooth.mean(0), color=color, label=f"{algorithm} (mean of {len(series)} seeds)")
        axis.fill_between(samples, smooth.min(0), smooth.max(0), color=color, alpha=0.2)
    axis.set_xlabel("samples (actions)")
    axis.set_ylabel(f"rollout reward (shaped, moving average of {window} iterations)")
    axis.set_title("Token-level (TPPO, BAD) vs action-level (APPO) PPO, tiny default")
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--algorithms", nargs="+", default=["TPPO", "APPO"])
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--window", type=int, default=10)
    parser.add_argument("--out_dir", default=str(ROOT / "bench" / "results"))
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="flags passed on to train_fctncalling.py")
    args = parser.parse_args(argv)
    extra = [a for a in args.extra if a != "--"]
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs = [(a, s) for s in args.seeds for a in args.algorithms]
    runs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as scratch:
        results = Path(scratch)
        pending, running = list(jobs), []
        while pending or running:
            while pending and len(running) < args.parallel:
                algorithm, seed = pending.pop(0)
                running.append((algorithm, seed, launch(algorithm, seed, results, extra), time.perf_counter()))
            time.sleep(2)
            for job in list(running):
                algorithm, seed, process, started = job
                if process.poll() is None:
                    continue
                running.remove(job)
                if process.returncode != 0:
                    print((results / f"{algorithm}_seed{seed}.log").read_text()[-3000:])
                    raise SystemExit(f"{algorithm} seed {seed} failed")
                run_dir = next((results / f"{algorithm}_seed{seed}" / "curves").glob(f"*/*/{algorithm}/run1"))
                everything = read_metrics(run_dir)
                metrics = [m for m in everything if "rollout/reward" in m]
                reward = [m["rollout/reward"] for m in metrics]
                first, last = quarter_means(reward)
                runs[f"{algorithm}_seed{seed}"] = {
                    "algorithm": algorithm, "seed": seed,
                    "samples": [m["samples"] for m in metrics], "reward": reward,
                    "heldout_greedy": [(m["samples"], m["heldout_greedy/accuracy"])
                                       for m in everything if "heldout_greedy/accuracy" in m],
                    "first_quarter": first, "last_quarter": last, "gain": last - first,
                    "wall_seconds": time.perf_counter() - started,
                }
                print(f"{algorithm} seed {seed}: first quarter {first:.3f}, last quarter {last:.3f}, "
                      f"gain {last - first:+.3f}", flush=True)
    summary = {}
    for algorithm in args.algorithms:
        chosen = [r for r in runs.values() if r["algorithm"] == algorithm]
        summary[algorithm] = {"mean_gain": float(np.mean([r["gain"] for r in chosen])),
                              "mean_last_quarter": float(np.mean([r["last_quarter"] for r in chosen])),
                              "mean_first_quarter": float(np.mean([r["first_quarter"] for r in chosen]))}
    (out_dir / "curves.json").write_text(json.dumps({"summary": summary, "runs": runs, "extra_flags": extra},
                                                    indent=1) + "\n")
    plotted = plot(runs, out_dir / "curves.png", args.window)
    print(json.dumps(summary, indent=2), "" if plotted else "(matplotlib missing: no plot)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
