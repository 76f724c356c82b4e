"""A vector env of multi-turn episodes stepping for a long time, with memory sampled.

``run_load`` drives ``gym.make_vec("fcenv/FunctionCalling-v0", num_envs=N, ...)`` over a
multi-turn BFCL file with a realistic mix of actions, decided per episode: the ground truth
(keyword calls, then prose that ends each turn), a perturbed ground truth (wrong values,
names or turns, dropped or extra calls, garbage steps; harness/trajectories.py), or wrong calls
and prose only. Episodes end (the last turn's prose, or too many steps in a turn) and the
vector env resets them itself. The process's resident memory (plus the workers', for the
async env) is sampled every ``sample_every`` steps after a garbage collection.

bench/bench_load.py runs it at full size (64 envs x 10,000 steps) and reports throughput;
tests/env/test_load.py runs a CI-sized load and bounds the memory growth after warm-up.
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym
import numpy as np

import fcenv  # noqa: F401  (registers the env)
from fcenv.data import load_tasks
from fcenv.tasks import Task
from harness.trajectories import PROSE, ground_truth_steps, perturbed_trajectories

WRONG_STEPS = [
    "[ls(a=True)]", "[cd(folder='nowhere')]", "[pwd()]", "[get_user_id(user='nobody')]", "[post_tweet(content=1)]",
    "[unknown_function(x=1)]", "[__import__(name='os')]", "[cat(file_name=__import__('os').getcwd())]",
    "Let me think about it.", "[", "```python\nls()\n```", "[mean(numbers=[1, 2, 'x'])]", "",
]


def rss_mib(pids: list[int] | None = None) -> float:
    """Resident memory of this process (and of ``pids``), in MiB, from /proc."""
    total = 0
    for pid in ["self", *(pids or [])]:
        try:
            with open(f"/proc/{pid}/status") as status:
                total += next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            continue
    return total / 1024


class ActionMix:
    """Each env's planned step texts for its current episode, chosen when the episode starts."""

    def __init__(self, tasks: dict[str, Task], seed: int):
        self.tasks = tasks
        self.rng = random.Random(seed)
        self.plans: dict[int, list[str]] = {}

    def start(self, env_index: int, task_id: str) -> None:
        task = self.tasks[task_id]
        roll = self.rng.random()
        if roll < 0.45:
            turns = ground_truth_steps(task)
        elif roll < 0.8:
            turns = perturbed_trajectories(task, self.rng, 1)[0][1]
        else:
            turns = [[self.rng.choice(WRONG_STEPS) for _ in range(self.rng.randint(0, 3))] + [PROSE]
                     for _ in task.ground_truth]
        self.plans[env_index] = [text for steps in turns for text in steps]

    def next(self, env_index: int) -> str:
        plan = self.plans[env_index]
        return plan.pop(0) if plan else PROSE  # prose ends a turn; enough of it ends the episode


@dataclass
class LoadReport:
    num_envs: int
    steps: int
    warmup: int
    seconds: float = 0.0  # stepping after warm-up (memory sampling not included)
    actions: int = 0  # env steps that took an action (not the vector env's reset steps)
    episodes: int = 0
    # Running figures rather than every reward, so the harness itself keeps memory flat.
    reward_min: float = float("inf")
    reward_max: float = float("-inf")
    reward_sum: float = 0.0
    rewarded: int = 0
    samples: list[tuple[int, float]] = field(default_factory=list)  # (vector step, RSS MiB)

    @property
    def rss_start(self) -> float:
        return self.samples[0][1]

    @property
    def rss_after_warmup(self) -> float:
        return next(rss for step, rss in self.samples if step >= self.warmup)

    @property
    def rss_end(self) -> float:
        return self.samples[-1][1]

    @property
    def growth_after_warmup(self) -> float:
        """The largest RSS seen after warm-up, above the RSS at the end of warm-up (MiB)."""
        return max(rss for step, rss in self.samples if step >= self.warmup) - self.rss_after_warmup

    @property
    def slope(self) -> float:
        """Least-squares RSS trend after warm-up, in MiB per 1,000 vector steps."""
        points = [(step, rss) for step, rss in self.samples if step >= self.warmup]
        if len(points) < 2:
            return 0.0
        steps, rss = np.array(points, dtype=float).T
        return float(np.polyfit(steps, rss, 1)[0] * 1000)


def run_load(dataset: Path, num_envs: int = 64, steps: int = 10_000, warmup: int = 1_000, sample_every: int = 250,
             mode: str = "sync", seed: int = 0,
             progress: Callable[[int, LoadReport], None] | None = None) -> LoadReport:
    tasks = {t.id: t for t in load_tasks(dataset)}
    vector_kwargs = {"shared_memory": False} if mode == "async" else {}
    envs = gym.make_vec("fcenv/FunctionCalling-v0", num_envs=num_envs, vectorization_mode=mode,
                        vector_kwargs=vector_kwargs, dataset_path=str(dataset), reward="shaped")
    workers = [p.pid for p in getattr(envs, "processes", [])]
    report = LoadReport(num_envs, steps, warmup)
    mix = ActionMix(tasks, seed)
    try:
        _, infos = envs.reset(seed=seed)
        for i in range(num_envs):
            mix.start(i, infos["id"][i])
        resetting = np.zeros(num_envs, dtype=bool)  # the vector env resets these at the next step
        gc.collect()
        report.samples.append((0, rss_mib(workers)))
        start = time.perf_counter()
        for step in range(1, steps + 1):
            if step == warmup + 1:
                start = time.perf_counter()
            actions = [mix.next(i) for i in range(num_envs)]
            _, rewards, terminated, truncated, infos = envs.step(actions)
            for i in np.flatnonzero(resetting):
                mix.start(i, infos["id"][i])
            if step > warmup:
                report.actions += int((~resetting).sum())
            acted = rewards[~resetting]
            if acted.size:
                report.reward_min = min(report.reward_min, float(acted.min()))
                report.reward_max = max(report.reward_max, float(acted.max()))
                report.reward_sum += float(acted.sum())
                report.rewarded += int(acted.size)
            resetting = terminated | truncated
            report.episodes += int(resetting.sum())
            if step % sample_every == 0 or step == steps or step == warmup:
                sampling = time.perf_counter()
                gc.collect()
                report.samples.append((step, rss_mib(workers)))
                if progress:
                    progress(step, report)
                start += time.perf_counter() - sampling if step > warmup else 0.0
        report.seconds = time.perf_counter() - start
    finally:
        envs.close()
    return report
