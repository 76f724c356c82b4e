"""Judge a multi-turn split's ground truth as a model's answer: every entry must pass.

Each entry is played through the env in FC mode (Hermes/Qwen tool calls) exactly as the warm-up
demonstrates it: its ground truth one call per step, then a reply without a call that ends the
turn. The episode's verdict is the multi-turn checker's (BFCL's rules: state and results after
every turn). Run ``python datasets/multi_turn/check_split.py FILE`` on a split; the generator
runs it on what it writes.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import gymnasium as gym

import fcenv
from fcenv.algos.model.warmup import ground_truth_steps, written_in
from fcenv.tool_formats import get_tool_format


def check_split(path: Path, tool_format: str = "hermes") -> Counter:
    """The kinds of the entries of ``path``, counted; raises naming every entry whose ground truth
    the checker fails."""
    env = gym.make(fcenv.ENV_ID, dataset_path=str(path), tool_format=tool_format)
    written = written_in(get_tool_format(tool_format))
    tasks = env.unwrapped.tasks
    failed, kinds = [], Counter()
    for index, task in enumerate(tasks):
        env.reset(options={"index": index})
        info: dict = {}
        for step in ground_truth_steps(task):
            _, _, terminated, truncated, info = env.step(written(step.text))
            if terminated or truncated:
                break
        if not info.get("valid"):
            failed.append(f"{task.id}: {info.get('error_type')}")
        kinds[task.category] += 1
    env.close()
    if failed:
        raise SystemExit(f"{path}: {len(failed)} of {len(tasks)} entries fail their own ground truth:\n  " + "\n  ".join(failed[:20]))
    return kinds


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(name, dict(check_split(Path(name))))
