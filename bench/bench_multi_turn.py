"""Multi-turn checking time, ours vs BFCL's, on the same trajectories; and the env's step cost.

Run: ``python -m bench.bench_multi_turn [--per_entry 2] [--repeat 3]``.

1. Checking: the ground truth of all 800 multi-turn entries plus ``--per_entry`` perturbed
   trajectories each (harness/trajectories.py), evaluated as BFCL's runner does (decode every
   step, execute, state and response checks). BFCL is timed inside its own process by the
   oracle driver's ``time_multi`` op; ours in this process with ``check_multi_turn_result``.
   One warm-up pass per side, then ``--repeat`` passes, the sides taking turns; the fastest
   pass of each side counts. Our cache of parsed ground-truth calls is emptied before each pass.
2. The env: ``reset`` + ``step`` through the ground-truth trajectories of every entry,
   reported per step.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from bench.side_by_side import fastest_passes
from fcenv.bfcl_data import DEFAULT_DIR as BFCL_DEFAULT_DIR
from fcenv.data import load_tasks
from fcenv.env import FunctionCallingEnv
from fcenv.episode import EpisodeSettings
from fcenv.evaluate import check_multi_turn_result
from fcenv.multi_turn.executor import parse_call_text
from harness.oracle import Oracle
from harness.trajectories import ground_truth_steps, perturbed_trajectories

ROOT = Path(__file__).resolve().parents[1]

CATEGORIES = ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"]


def bfcl_dir() -> Path:
    for path in (ROOT.parent / "shared" / "bfcl", ROOT / "datasets" / "bfcl", BFCL_DEFAULT_DIR):
        if (path / "BFCL_v4_multi_turn_base.json").exists():
            return path
    raise SystemExit("BFCL data not found; run `python -m fcenv data bfcl`")


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per_entry", type=int, default=2, help="perturbed trajectories per entry")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--oracle_python", default=str(ROOT / ".oracle-venv" / "bin" / "python"))
    args = parser.parse_args()

    data = bfcl_dir()
    rng = random.Random(0)
    cases = []
    for category in CATEGORIES:
        for task in load_tasks(data / f"BFCL_v4_{category}.json"):
            cases.append((task, ground_truth_steps(task)))
            cases += [(task, steps) for _, steps in perturbed_trajectories(task, rng, args.per_entry)]

    items = [{"entry": {"id": t.id, "initial_config": t.initial_config, "involved_classes": t.involved_classes},
              "ground_truth": t.ground_truth, "turns": steps} for t, steps in cases]
    request = {"op": "time_multi", "items": items, "repeat": 1}
    oracle = Oracle(args.oracle_python)
    settings = EpisodeSettings()

    def ours_pass() -> float:
        parse_call_text.cache_clear()  # each pass starts as a first evaluation of the file would
        start = time.perf_counter()
        for task, steps in cases:
            check_multi_turn_result(task, steps, settings)
        return time.perf_counter() - start

    ours, theirs = fastest_passes(ours_pass, oracle, request, args.repeat)

    runs = len(cases)
    print(f"multi-turn checking, {len(cases)} trajectories, fastest of {args.repeat} passes per side")
    print(f"{'':12}{'total s':>10}{'ms/trajectory':>16}")
    print(f"{'ours':12}{ours:>10.2f}{ours / runs * 1e3:>16.2f}")
    print(f"{'BFCL':12}{theirs:>10.2f}{theirs / runs * 1e3:>16.2f}")
    print(f"speed-up: {theirs / ours:.2f}x\n")

    steps = 0
    start = time.perf_counter()
    resets = 0
    for category in CATEGORIES:
        path = data / f"BFCL_v4_{category}.json"
        env = FunctionCallingEnv(path, reward="shaped")
        for task in load_tasks(path):
            env.reset(options={"id": task.id})
            resets += 1
            for texts in ground_truth_steps(task):
                for text in texts:
                    env.step(text)
                    steps += 1
    elapsed = time.perf_counter() - start
    print(f"env: {resets} episodes, {steps} steps in {elapsed:.2f} s: {elapsed / steps * 1e3:.2f} ms/step "
          f"(reset included), {steps / elapsed:.0f} steps/s")


if __name__ == "__main__":
    main()
