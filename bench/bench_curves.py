"""Algorithms compared on the embedded defaults, several seeds each: held-out accuracy and
reward against samples and training time. By default the credit-assignment comparison: TPPO
(BAD, token level), APPO (GAE over actions) and TurnPPO (GAE over BFCL turns); any preset or
named variant (``VARIANTS``: ARPO = GRPO with entropy branching, LPR = TPPO whose critic starts
from ``fcenv process-rewards`` values, TPPO_steps = TPPO with step rewards) can be given.

Runs ``train_fctncalling.py`` (the embedded default, any extra flags appended, e.g.
``--dataset_path multi_turn_train`` for the multi-turn default) once per
algorithm and seed, a few runs at a time (so wall times here are not the trainer's speed:
bench/bench_train.py measures that, one run at a time). The accuracy is the trainer's own
held-out evaluation (greedy and sampled, every ``--eval_interval`` iterations, on the whole
held-out split); bench/heldout.py checks it independently for the default runs.

Writes ``<name>.json`` (every run's curves, and per algorithm the mean start and end held-out
accuracy and the samples until greedy accuracy first gained +0.20) and ``<name>.png`` (held-out
greedy accuracy and rollout reward against samples: mean of the seeds, their range shaded; and
accuracy against training minutes), and prints the summary as a markdown table. ``--include``
joins earlier reports' runs, ``--reuse`` finished run folders (e.g. bench_train.py's, timed alone).

Run: ``python -m bench.bench_curves --name credit_single_turn [--seeds 1 2 3] [--parallel 2]
[-- extra training flags]``.
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

from fcenv.algos.store.results import read_metrics

ROOT = Path(__file__).resolve().parents[1]

ALGORITHMS = ("TPPO", "APPO", "TurnPPO")
COLORS = {"TPPO": "tab:blue", "APPO": "tab:orange", "TurnPPO": "tab:green", "GRPO": "tab:red", "RLOO": "tab:purple",
          "ARPO": "tab:brown", "LPR": "tab:olive", "DrGRPO": "tab:pink", "TPPO_steps": "tab:cyan",
          "ARPO_RLOO": "tab:gray"}


# Methods that are a preset plus flags, named as the papers name them.
VARIANTS = {"ARPO": ("GRPO", ["--branching", "entropy"]),
            "ARPO_RLOO": ("RLOO", ["--branching", "entropy"]),  # the same branching, RLOO's baseline
            "LPR": ("TPPO", []),  # with --critic_init_values FILE among the extra flags
            "TPPO_steps": ("TPPO", ["--reward", "steps"])}


def launch(algorithm: str, seed: int, results: Path, extra: list[str]) -> subprocess.Popen:
    preset, flags = VARIANTS.get(algorithm, (algorithm, []))
    command = [sys.executable, str(ROOT / "train_fctncalling.py"), "--algorithm_name", preset, *flags, "--seed", str(seed),
               "--experiment_name", "curves", "--results_dir", str(results / f"{algorithm}_seed{seed}"),
               "--no-progress", *extra]
    with open(results / f"{algorithm}_seed{seed}.log", "w") as log:  # the child keeps its own copy
        return subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)


def run_curves(run_dir: Path) -> dict:
    metrics = read_metrics(run_dir)
    rollouts = [m for m in metrics if "rollout/reward" in m]
    evaluations = [m for m in metrics if "heldout_greedy/accuracy" in m]
    return {"samples": [m["samples"] for m in rollouts], "reward": [m["rollout/reward"] for m in rollouts],
            "rollout_accuracy": [m["rollout/accuracy"] for m in rollouts],
            "seconds": np.cumsum([m.get("perf/iteration_seconds", 0.0) for m in rollouts]).round(2).tolist(),
            "branches_per_iteration": (float(np.mean([m["rollout/branches"] for m in rollouts]))
                                       if rollouts and "rollout/branches" in rollouts[0] else None),
            "eval_samples": [m["samples"] for m in evaluations],
            "greedy": [m["heldout_greedy/accuracy"] for m in evaluations],
            "sampled": [m["heldout_sampled/accuracy"] for m in evaluations]}


def samples_to_gain(curve: dict, gain: float) -> float | None:
    """Samples until held-out greedy accuracy first stood ``gain`` above its start."""
    start = curve["greedy"][0]
    return next((s for s, a in zip(curve["eval_samples"], curve["greedy"]) if a >= start + gain), None)


def moving_average(values: np.ndarray, window: int) -> np.ndarray:
    if len(values) < window:
        return values
    kernel = np.ones(window) / window
    head = np.array([values[: i + 1].mean() for i in range(window - 1)])
    return np.concatenate([head, np.convolve(values, kernel, mode="valid")])


def summarize(runs: dict, algorithms: list[str]) -> dict:
    summary = {}
    for algorithm in algorithms:
        chosen = [r for r in runs.values() if r["algorithm"] == algorithm]
        if not chosen:
            continue
        reached = [samples_to_gain(r, 0.20) for r in chosen]
        summary[algorithm] = {
            "seeds": len(chosen),
            "greedy_start": float(np.mean([r["greedy"][0] for r in chosen])),
            "greedy_end": float(np.mean([r["greedy"][-1] for r in chosen])),
            "greedy_end_by_seed": [r["greedy"][-1] for r in chosen],
            "sampled_start": float(np.mean([r["sampled"][0] for r in chosen])),
            "sampled_end": float(np.mean([r["sampled"][-1] for r in chosen])),
            "seeds_gaining_0.20": sum(x is not None for x in reached),
            "samples_to_gain_0.20": reached,
            "reward_first_quarter": float(np.mean([np.mean(r["reward"][: max(1, len(r["reward"]) // 4)]) for r in chosen])),
            "reward_last_quarter": float(np.mean([np.mean(r["reward"][-max(1, len(r["reward"]) // 4):]) for r in chosen])),
            "training_minutes": (float(np.mean([r["seconds"][-1] for r in chosen])) / 60
                                 if all(r.get("seconds") for r in chosen) else None),
        }
    return summary


def markdown_table(summary: dict) -> str:
    """The summary as BENCHMARKS.md shows it."""
    lines = ["| method | greedy start → end (mean of seeds) | per seed | sampled start → end | samples to +0.20 "
             "greedy | training min |", "|---|---|---|---|---|---|"]
    for name, s in summary.items():
        reached = ", ".join("—" if x is None else f"{x:,}" for x in s["samples_to_gain_0.20"])
        minutes = "—" if s.get("training_minutes") is None else f"{s['training_minutes']:.1f}"
        seeds = " / ".join(f"{x:.3f}" for x in s["greedy_end_by_seed"])
        lines.append(f"| {name} | {s['greedy_start']:.3f} → {s['greedy_end']:.3f} | {seeds} | "
                     f"{s['sampled_start']:.3f} → {s['sampled_end']:.3f} | {reached} | {minutes} |")
    return "\n".join(lines)


def plot(runs: dict, algorithms: list[str], path: Path, title: str, window: int) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    timed = any("seconds" in r for r in runs.values())
    figure, axes = plt.subplots(1, 3 if timed else 2, figsize=(18 if timed else 12, 4.2))
    accuracy, reward = axes[0], axes[1]
    for algorithm in algorithms:
        series = [r for r in runs.values() if r["algorithm"] == algorithm]
        if not series:
            continue
        color = COLORS.get(algorithm)
        length = min(len(r["greedy"]) for r in series)
        samples = np.array(series[0]["eval_samples"][:length])
        values = np.stack([r["greedy"][:length] for r in series])
        accuracy.plot(samples, values.mean(0), color=color, marker="o", label=f"{algorithm} ({len(series)} seeds)")
        accuracy.fill_between(samples, values.min(0), values.max(0), color=color, alpha=0.15)
        length = min(len(r["reward"]) for r in series)
        samples = np.array(series[0]["samples"][:length])
        smooth = np.stack([moving_average(np.array(r["reward"][:length]), window) for r in series])
        reward.plot(samples, smooth.mean(0), color=color, label=algorithm)
        reward.fill_between(samples, smooth.min(0), smooth.max(0), color=color, alpha=0.15)
        if timed and all("seconds" in r for r in series):
            for r in series:  # each seed's own clock: the evaluations at its training seconds
                seconds = np.interp(r["eval_samples"], [0] + r["samples"], [0.0] + r["seconds"])
                axes[2].plot(seconds / 60, r["greedy"], color=color, alpha=0.8, marker=".",
                             label=algorithm if r is series[0] else None)
    if timed:
        axes[2].set_xlabel("training minutes (rollout + update, evaluations excluded)")
        axes[2].set_ylabel("held-out BFCL accuracy, greedy")
        axes[2].set_ylim(0, 1)
        axes[2].grid(alpha=0.3)
        axes[2].legend(loc="lower right")
    accuracy.set_ylabel("held-out BFCL accuracy, greedy")
    accuracy.set_ylim(0, 1)
    reward.set_ylabel(f"rollout reward (moving average of {window} iterations)")
    for axis in (accuracy, reward):
        axis.set_xlabel("samples (actions)")
        axis.grid(alpha=0.3)
        axis.legend(loc="lower right")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="credit_single_turn", help="output file stem in --out_dir")
    parser.add_argument("--title", default="Credit assignment on the single-turn default")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS))
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--window", type=int, default=10)
    parser.add_argument("--out_dir", default=str(ROOT / "bench" / "results"))
    parser.add_argument("--reuse", help="a folder of finished runs with the same flags, <ALGORITHM>_seed<N>/ each "
                                            "holding a run's metrics.jsonl, that stand in for those jobs")
    parser.add_argument("--include", nargs="+", default=[],
                        help="earlier reports (<name>.json) whose runs join this one's table and plot, e.g. the "
                             "TPPO runs of credit_single_turn.json beside new GRPO runs")
    parser.add_argument("--plot_only", action="store_true", help="redraw from <name>.json, train nothing")
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="flags passed on to train_fctncalling.py")
    args = parser.parse_args(argv)
    extra = [a for a in args.extra if a != "--"]
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report_path = out_dir / f"{args.name}.json"
    if args.plot_only:
        report = json.loads(report_path.read_text())
        print(markdown_table(report["summary"]))
        return 0 if plot(report["runs"], args.algorithms, out_dir / f"{args.name}.png", args.title, args.window) else 1
    runs: dict[str, dict] = {}
    for earlier in args.include:
        for key, run in json.loads(Path(earlier).read_text())["runs"].items():
            if run["algorithm"] in args.algorithms:
                runs[key] = run
    if args.reuse:  # e.g. the default TPPO runs that bench_train.py made, timed alone
        for folder in sorted(Path(args.reuse).glob("*_seed*")):
            algorithm, seed = folder.name.rsplit("_seed", 1)
            runs[folder.name] = {"algorithm": algorithm, "seed": int(seed), **run_curves(folder)}
    jobs = [(a, s) for s in args.seeds for a in args.algorithms if f"{a}_seed{s}" not in runs]
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
                preset = VARIANTS.get(algorithm, (algorithm,))[0]
                run_dir = next((results / f"{algorithm}_seed{seed}" / "curves").glob(f"*/*/{preset}/run1"))
                curve = run_curves(run_dir)
                runs[f"{algorithm}_seed{seed}"] = {"algorithm": algorithm, "seed": seed, **curve,
                                                   "wall_seconds": round(time.perf_counter() - started, 1)}
                print(f"{algorithm} seed {seed}: held-out greedy {curve['greedy'][0]:.3f} -> {curve['greedy'][-1]:.3f}, "
                      f"sampled {curve['sampled'][0]:.3f} -> {curve['sampled'][-1]:.3f}", flush=True)
    summary = summarize(runs, args.algorithms)
    report_path.write_text(json.dumps({"summary": summary, "runs": runs, "extra_flags": extra}, indent=1) + "\n")
    plotted = plot(runs, args.algorithms, out_dir / f"{args.name}.png", args.title, args.window)
    print(json.dumps(summary, indent=2), "" if plotted else "(matplotlib missing: no plot)")
    print(markdown_table(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
