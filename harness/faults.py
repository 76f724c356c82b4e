"""Kill-and-resume helpers shared by tests/algos/test_faults.py and bench/bench_faults.py.

A ``Training`` is one real ``python train_fctncalling.py`` process whose output goes to a
file (a pipe nobody reads would fill up and stall it). The helpers poll the run folder to
learn where the process is, freeze it with SIGSTOP to look at the folder while nothing
moves, and end it with SIGKILL, the one signal a process can neither catch nor clean up
after.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors.torch import load_file

from fcenv.algos.store import checkpoint as ckpt
from fcenv.algos.store.results import read_metrics
from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "train_fctncalling.py"
THREADS = 2


def train_flags(model: Path, results: Path, iterations: int) -> list[str]:
    """Tiny settings, a checkpoint every iteration, an evaluation every other one."""
    return ["--model_name_or_path", str(model), "--system_prompt", TINY_SYSTEM_PROMPT, "--hide_function_docs", "--results_dir", str(results),
            "--n_rollout_threads", str(THREADS), "--num_env_steps", str(THREADS * iterations),
            "--max_new_tokens", "8", "--lora_r", "4", "--save_interval", "1", "--eval_interval", "2",
            "--eval_episodes", "3", "--ppo_epoch", "1", "--seed", "3", "--no-progress"]


class Training:
    """One training process; ``name`` names its log file in ``log_dir``."""

    def __init__(self, flags: list[str], log_dir: Path, name: str):
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"{name}.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115  (open as long as the process runs)
        self.started = time.monotonic()
        self.process = subprocess.Popen([sys.executable, str(SCRIPT), *flags], cwd=ROOT,
                                        stdout=self._log, stderr=subprocess.STDOUT)

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def running(self) -> bool:
        return self.process.poll() is None

    def wait_for(self, condition: Callable[[], bool], timeout: float = 300.0) -> bool:
        """Poll until ``condition()`` holds (True) or the process ends first (False)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if not self.running():
                return condition()
            if time.monotonic() > deadline:
                self.kill()
                raise TimeoutError(f"the training process never got there; its output:\n{self.output()[-3000:]}")
            time.sleep(0.001)
        return True

    def stop(self) -> None:
        """SIGSTOP, and wait until the process really is stopped, so that what we look at holds still."""
        self.process.send_signal(signal.SIGSTOP)
        stat = Path(f"/proc/{self.process.pid}/stat")
        for _ in range(10_000):
            try:
                state = stat.read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                return  # no /proc (not Linux) or the process is gone
            if state in ("T", "t", "Z", "X"):
                return
            time.sleep(0.0001)

    def step_until(self, condition: Callable[[], bool], too_late: Callable[[], bool], slice_s: float = 0.001) -> bool:
        """Let a stopped process run in slices of about ``slice_s`` seconds until ``condition()``
        holds (True) or ``too_late()`` does (False); it is left stopped either way."""
        while True:
            if condition():
                return True
            if too_late() or not self.running():
                return False
            self.resume()
            time.sleep(slice_s)
            self.stop()

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        if self.running():
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self._log.close()

    def finish(self, timeout: float = 300.0) -> int:
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        self._log.close()
        return code


def find_run_dir(results: Path) -> Path | None:
    found = sorted(results.glob("*/*/*/*/run1"))
    return found[0] if found else None


def published(run_dir: Path) -> list[int]:
    return [int(p.name.split("_")[1]) for p in ckpt.complete_checkpoints(run_dir)]


def partials(run_dir: Path) -> list[int]:
    return [int(p.name.split("_")[1].split(".")[0]) for p in ckpt.incomplete_checkpoints(run_dir)]


def stop_between_writes(training: Training, run_dir: Path, after: int) -> None:
    """Freeze the process inside an iteration: checkpoint ``after`` written, no write under way."""
    while True:
        reached = training.wait_for(lambda: max(published(run_dir), default=0) >= after and not partials(run_dir))
        assert reached, "the run ended first:\n" + training.output()[-3000:]
        training.stop()
        if not partials(run_dir):
            return
        training.resume()  # a write began between the look and the stop


def stop_inside_write(training: Training, run_dir: Path, first: int, phase: str) -> int:
    """Freeze the process in a checkpoint write of iteration >= ``first`` once ``phase`` (a path
    in the staging folder) exists; returns the iteration being written."""
    while True:
        reached = training.wait_for(lambda first=first: any(k >= first for k in partials(run_dir)))
        assert reached, "the run ended first:\n" + training.output()[-3000:]
        training.stop()
        writing = [k for k in partials(run_dir) if k >= first]
        if writing:
            stage = ckpt.staging_dir(run_dir / "checkpoints", writing[0])
            if training.step_until(lambda stage=stage: (stage / phase).exists(), lambda stage=stage: not stage.exists()):
                return writing[0]
        training.resume()  # this write finished before the phase was caught: try the next one
        first = max(published(run_dir)) + 1


def checkpoint_tensors(checkpoint: Path) -> dict[str, torch.Tensor]:
    """Every tensor a checkpoint holds: adapters, value head and the optimizers' moments."""
    tensors = {}
    for name in (ckpt.ACTOR_WEIGHTS, ckpt.CRITIC_WEIGHTS, ckpt.VALUE_HEAD):
        tensors.update({f"{name}:{k}": v for k, v in load_file(checkpoint / name).items()})
    optimizers = ckpt.load_data(checkpoint / ckpt.OPTIMIZERS)
    for role, state in optimizers.items():
        for index, moments in state["state"].items():
            tensors.update({f"{role}:{index}:{k}": v for k, v in moments.items() if torch.is_tensor(v)})
    return tensors


def same_tensors(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def scalars(run_dir: Path) -> dict[str, list[tuple[int, float]]]:
    """What TensorBoard shows: every tag's (step, value) pairs, in the order it reads them."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir / "logs"), size_guidance={"scalars": 0})
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def differences(run_dir: Path, reference: Path, iterations: int) -> list[str]:
    """How a (killed and resumed) run differs from an uninterrupted ``reference`` run of the
    same flags: checkpoints, metrics and TensorBoard scalars must all be equal, each
    iteration logged once, and no unfinished write left over. Empty when they are the same."""
    problems = []
    if published(run_dir) != list(range(0, iterations + 1)):  # 0: the start checkpoint
        problems.append(f"checkpoints {published(run_dir)}")
    if partials(run_dir):
        problems.append(f"unfinished writes left over: {partials(run_dir)}")
    for mine, theirs in zip(ckpt.complete_checkpoints(run_dir), ckpt.complete_checkpoints(reference)):
        try:
            ckpt.verify_checkpoint(mine)
        except ckpt.CheckpointError as exc:
            problems.append(str(exc))
            continue
        if not same_tensors(checkpoint_tensors(mine), checkpoint_tensors(theirs)):
            problems.append(f"{mine.name} holds other tensors than the uninterrupted run's")

    def without_timings(records: list[dict]) -> list[dict]:
        return [{k: v for k, v in r.items() if not k.startswith("perf/")} for r in records]

    metrics = read_metrics(run_dir)
    if [m["iteration"] for m in metrics] != list(range(0, iterations + 1)):  # 0: the held-out start
        problems.append(f"metrics.jsonl iterations {[m['iteration'] for m in metrics]}")
    elif without_timings(metrics) != without_timings(read_metrics(reference)):
        problems.append("metrics.jsonl values differ from the uninterrupted run's")

    got, expected = scalars(run_dir), scalars(reference)
    if got.keys() != expected.keys():
        problems.append(f"TensorBoard tags differ: {sorted(set(got) ^ set(expected))}")
    for tag in sorted(set(got) & set(expected)):
        steps, expected_steps = [s for s, _ in got[tag]], [s for s, _ in expected[tag]]
        if steps != expected_steps:
            problems.append(f"TensorBoard {tag} steps {steps}, expected {expected_steps}")
        elif not tag.startswith("perf/") and got[tag] != expected[tag]:
            problems.append(f"TensorBoard {tag} values differ from the uninterrupted run's")
    return problems
