"""Where a training iteration's time goes, from a py-spy profile of ``fcenv train``.

Record one (py-spy is a tool, not a dependency: ``pip install py-spy``) on a running run, its
vLLM worker included::

    py-spy record --pid TRAINER_PID --subprocesses --rate 20 --duration 200 --format raw -o profile.txt

then ``python -m bench.profile_phases profile.txt [--out bench/results/profile.json]`` sums the
samples by phase: the update (and, inside it, the backward pass, the forward's MLPs, attention
and its projections, the trained token rows' layer), the engine's sampling and its sync, and
the rest. py-spy counts a process only while it runs, so the shares are of the time the CPU was
busy, in whichever process.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

_LINE = re.compile(r"^(.*) (\d+)$")


def phase_of(frames: list[str]) -> str:
    """A sample's phase, from its stack (outermost frame first)."""
    if "PPOTrainer._actor_step" in frames or "PPOTrainer._critic_step" in frames:
        if any("backward" in f for f in frames):
            return "update: backward"
        if any(f.startswith("TrainableTokensLayer") for f in frames):
            return "update: forward, trained token rows"
        if "Qwen2MLP.forward" in frames:
            return "update: forward, MLPs"
        if "Qwen2Attention.forward" in frames:
            return "update: forward, attention and its projections"
        return "update: forward, the rest (norms, log-softmax, embedding)"
    if "Worker.sample" in frames or "Runner._play" in frames:
        return "rollout: sampling"
    if "Worker.sync" in frames or any(f.endswith(".sync") for f in frames):
        return "rollout: the actor handed to the engine"
    if "score_rollout" in frames or "bootstrap_values" in frames:
        return "scoring"
    return "the rest (env, checks, Python, idle threads)"


def phases(lines: list[str]) -> Counter:
    counts: Counter = Counter()
    for line in lines:
        match = _LINE.match(line)
        if match:
            frames = [frame.split(" (")[0] for frame in match.group(1).split(";")]
            counts[phase_of(frames)] += int(match.group(2))
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("profile", help="py-spy's --format raw output")
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    counts = phases(Path(args.profile).read_text().splitlines())
    total = sum(counts.values())
    shares = {name: counts[name] / total for name in sorted(counts, key=counts.get, reverse=True)}
    for name, share in shares.items():
        print(f"{share:6.1%}  {name}")
    if args.out:
        Path(args.out).write_text(json.dumps({"samples": total, "shares": shares}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
