"""The plain ``python train_fctncalling.py`` (the embedded default), timed, for several seeds,
with held-out BFCL accuracy from start to end measured by an independent client.

Runs one seed after another (so each run has the machine to itself), then measures each run's
start (``iter_000000``) and end checkpoints with ``bench/heldout.py`` (transformers' Auto
classes, ``PeftModel.from_pretrained``, plain ``generate``, env verdicts), greedy and sampled at
temperature 1. The goal: at most 10 minutes per run on 2 CPU cores once the model is cached;
held-out greedy accuracy +0.15 or more, ending at 0.80 or more; sampled +0.25 or more. Also
plots the trainer's own held-out evaluations against samples (``train_heldout.png``).

Run: ``python -m bench.bench_train [--seeds 1 2 3] [--out bench/results/train.json] [-- extra flags]``.
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


def curves(run_dir: Path) -> dict[str, list[float]]:
    evaluations = [m for m in read_metrics(run_dir) if "heldout_greedy/accuracy" in m]
    return {"samples": [m["samples"] for m in evaluations],
            "greedy": [m["heldout_greedy/accuracy"] for m in evaluations],
            "sampled": [m["heldout_sampled/accuracy"] for m in evaluations]}


def plot(report: list[dict], path: Path, title: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axis = plt.subplots(figsize=(7, 4.2))
    for mode, color in (("greedy", "tab:blue"), ("sampled", "tab:orange")):
        length = min(len(r["curve"][mode]) for r in report)
        samples = np.array(report[0]["curve"]["samples"][:length])
        values = np.stack([r["curve"][mode][:length] for r in report])
        axis.plot(samples, values.mean(0), color=color, marker="o",
                  label=f"{mode} (mean of {len(report)} seeds; band: their range)")
        axis.fill_between(samples, values.min(0), values.max(0), color=color, alpha=0.2)
    axis.set_xlabel("samples (actions)")
    axis.set_ylabel("held-out BFCL accuracy (verdict rate)")
    axis.set_ylim(0, 1)
    axis.set_title(title)
    axis.grid(alpha=0.3)
    axis.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--samples", type=int, default=4, help="sampled answers per held-out task (client)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "train.json"))
    parser.add_argument("--plot", default=str(ROOT / "bench" / "results" / "train_heldout.png"))
    parser.add_argument("--title", default="Embedded default: held-out accuracy during TPPO")
    parser.add_argument("--plot_only", action="store_true", help="redraw the plot from --out, train nothing")
    parser.add_argument("--runs_dir", help="keep the runs here (default: a temporary folder, removed at the end)")
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="flags passed on to train_fctncalling.py")
    args = parser.parse_args(argv)
    if args.plot_only:
        return 0 if plot(json.loads(Path(args.out).read_text())["runs"], Path(args.plot), args.title) else 1
    extra = [a for a in args.extra if a != "--"]
    # Each seed's run must be the only one in its folder (the trainer numbers a second run2 and
    # the client would measure the first): refuse before any training.
    taken = [seed for seed in args.seeds if args.runs_dir and Path(args.runs_dir, f"seed{seed}").exists()]
    if taken:
        parser.error(f"--runs_dir {args.runs_dir} already holds runs of seed(s) {taken}: pick another folder")
    report = []
    with tempfile.TemporaryDirectory() as scratch:
        results = args.runs_dir or scratch
        for seed in args.seeds:
            started = time.perf_counter()
            subprocess.run([sys.executable, str(ROOT / "train_fctncalling.py"), "--seed", str(seed),
                            "--results_dir", results, "--experiment_name", f"seed{seed}", "--no-progress", *extra],
                           cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            seconds = time.perf_counter() - started
            (run_dir,) = Path(results, f"seed{seed}").glob("*/*/*/run1")
            measured = Path(results) / f"heldout_seed{seed}.json"
            subprocess.run([sys.executable, "-m", "bench.heldout", str(run_dir), "--samples",
                            str(args.samples), "--out", str(measured)], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            start, end = json.loads(measured.read_text())["reports"]
            row = {"seed": seed, "train_seconds": round(seconds, 1), "start": start, "end": end,
                   "curve": curves(run_dir)}
            report.append(row)
            print(f"seed {seed}: {seconds / 60:.1f} min; held-out greedy {start['greedy_accuracy']:.3f} -> "
                  f"{end['greedy_accuracy']:.3f}, sampled {start['sampled_accuracy']:.3f} -> "
                  f"{end['sampled_accuracy']:.3f} ({start['tasks']} tasks, independent client)", flush=True)
            # Written after every seed: a run stopped part-way keeps the seeds it finished.
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps({"extra_flags": extra, "runs": report}, indent=1) + "\n")
    plotted = plot(report, Path(args.plot), args.title)
    print("" if plotted else "(matplotlib missing: no plot)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
