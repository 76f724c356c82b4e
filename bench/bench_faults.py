"""Fault tolerance: training runs killed with SIGKILL at random moments, then resumed.

Run: ``python -m bench.bench_faults [--trials 12] [--iterations 6] [--seed 0] [--keep DIR]``.

Real ``python train_fctncalling.py`` processes on the tiny test model (built offline and
cached), a checkpoint every iteration. One uninterrupted run is the reference. Each trial
starts a fresh run and kills it, alternately:
- mid-iteration: a random time (0-0.3 s) after a random checkpoint was published;
- mid-write: inside a random checkpoint write, at a random phase of it (staging folder just
  made, actor adapter saved, optimizers saved, manifest written with only the rename to come)
  plus a random number of ~1 ms slices of further progress.
Where a kill landed is read from the run folder afterwards (a staging folder left behind
means it landed inside a write). Then ``--resume RUN_DIR`` runs to the end.

A trial resumed correctly when the resumed process loaded the newest checkpoint that was
complete at the kill (skipping an unfinished write, and saying so), finished, and its run
equals the reference: every checkpoint, metrics.jsonl and the TensorBoard scalars (each
iteration once, same values). A corrupted checkpoint loaded is a resumed process that
loaded a checkpoint whose tensors differ from the reference's of that iteration (or a
staging folder); a damaged checkpoint left is a published checkpoint that fails its
manifest check after a kill. Both must be 0.

Prints trials, where the kills landed, resumed correctly, corrupted checkpoints loaded,
damaged checkpoints left, time to resume (launch of the resumed process until it has loaded
the checkpoint; mean and max) and, within that, the time to find, verify and load the
checkpoint alone. Exits 1 unless every trial resumed correctly with nothing corrupted.
"""

from __future__ import annotations

import argparse
import logging
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from fcenv.algos.config import parse_config
from fcenv.algos.model.loading import load_model
from fcenv.algos.model.policy import LoraSettings, Policy
from fcenv.algos.ppo.update import make_optimizers
from fcenv.algos.store import checkpoint as ckpt
from fcenv.algos.tiny.build import DEFAULT_CACHE_DIR, TINY_SYSTEM_PROMPT, build_tiny
from harness.faults import (
    Training,
    checkpoint_tensors,
    differences,
    find_run_dir,
    partials,
    published,
    same_tensors,
    stop_inside_write,
    train_flags,
)
from harness.tiny_test_model import TEST_SPEC

ROOT = Path(__file__).resolve().parents[1]

WRITE_PHASES = ("", "actor/adapter_model.safetensors", "optimizers.pt", "manifest.json")
# The files of a write in the order it makes them, to tell how far a killed write got.
WRITE_ORDER = (ckpt.ACTOR_WEIGHTS, ckpt.CRITIC_WEIGHTS, ckpt.VALUE_HEAD, ckpt.OPTIMIZERS, ckpt.STATE,
               ckpt.rng_file(0), "manifest.json")


def write_progress(stage: Path) -> str:
    done = [name for name in WRITE_ORDER if (stage / name).exists()]
    return f"after {done[-1]}" if done else "before any file"


@dataclass
class Trial:
    mode: str  # what was aimed at: "iteration" or "write"
    landed: str = ""  # where the kill landed, read from the run folder
    write_progress: str = ""  # for a kill inside a write: the last file it had made
    resumed_from: int | None = None
    resumed_correctly: bool = False
    corrupted_loaded: bool = False
    damaged_left: int = 0
    resume_seconds: float = 0.0
    load_seconds: float = 0.0
    problems: tuple[str, ...] = ()


def kill_somewhere(training: Training, run_dir: Path, mode: str, iterations: int, rng: random.Random) -> None:
    """Freeze the process at a random moment of the chosen kind (it is killed by the caller)."""
    if mode == "iteration":
        after = rng.randint(1, iterations - 2)
        if not training.wait_for(lambda: max(published(run_dir), default=0) >= after):
            return
        time.sleep(rng.uniform(0.0, 0.3))
        training.stop()
        return
    writing = stop_inside_write(training, run_dir, rng.randint(2, iterations), rng.choice(WRITE_PHASES))
    stage = ckpt.staging_dir(run_dir / "checkpoints", writing)
    for _ in range(rng.randint(0, 3)):  # a little further into the write, while it lasts
        if not stage.exists():
            break
        training.resume()
        time.sleep(0.001)
        training.stop()


def load_seconds(checkpoint_of_run: Path, model: Path, flags: list[str]) -> float:
    """Find, verify and load the checkpoint alone (no process start, no model build)."""
    config = parse_config(flags)
    loaded = load_model(str(model), torch.device("cpu"), system_prompt=TINY_SYSTEM_PROMPT)
    lora = LoraSettings(r=config.lora_r, alpha=config.lora_alpha, target_modules=list(config.lora_target_modules))
    policy = Policy(loaded.base, pad_id=loaded.pad_id, stop_ids=loaded.stop_ids, actor_lora=lora,
                    critic_fraction=config.critic_fraction)
    optimizers = make_optimizers(policy, config.lr, config.critic_lr)
    started = time.perf_counter()
    checkpoint = ckpt.find_resume_checkpoint(checkpoint_of_run, log=lambda message: None)
    ckpt.load_model_state(checkpoint, policy, *optimizers)
    ckpt.load_rng(checkpoint, 0)
    return time.perf_counter() - started


def run_trial(number: int, mode: str, model: Path, reference: Path, work: Path, iterations: int,
              rng: random.Random) -> Trial:
    trial = Trial(mode)
    results = work / f"trial{number}"
    flags = train_flags(model, results, iterations)
    training = Training(flags, results, "killed")
    if not training.wait_for(lambda: find_run_dir(results) is not None):
        return Trial(mode, problems=("the run ended before making its folder",))
    run_dir = find_run_dir(results)
    try:
        kill_somewhere(training, run_dir, mode, iterations, rng)
    except AssertionError:  # every write finished before the phase aimed at was caught
        pass
    if not training.running():
        training.kill()
        return Trial(mode, landed="nowhere", problems=("the run ended before the kill",))
    complete, unfinished = published(run_dir), partials(run_dir)
    training.kill()
    if not complete:
        return Trial(mode, landed="before any checkpoint", problems=("no checkpoint to resume from",))
    trial.landed = "write" if unfinished else "iteration"
    if unfinished:
        trial.write_progress = write_progress(ckpt.staging_dir(run_dir / "checkpoints", unfinished[-1]))
    for checkpoint in ckpt.complete_checkpoints(run_dir):
        try:
            ckpt.verify_checkpoint(checkpoint)
        except ckpt.CheckpointError:
            trial.damaged_left += 1
    expected = max(complete)

    copy = work / f"trial{number}-load" / "run1"
    shutil.copytree(run_dir, copy)  # the load is timed on a copy: resuming rewrites metrics.jsonl
    trial.load_seconds = load_seconds(copy, model, flags)
    shutil.rmtree(copy.parent)

    resumed = Training([*flags, "--resume", str(run_dir)], results, "resumed")
    resumed.wait_for(lambda: "resumed from " in resumed.output())
    trial.resume_seconds = time.monotonic() - resumed.started
    code = resumed.finish()
    output = resumed.output()
    line = next((row for row in output.splitlines() if row.startswith("resumed from ")), "")
    loaded = Path(line.removeprefix("resumed from ").rsplit(" at iteration", 1)[0]) if line else None
    problems = []
    if loaded is not None:
        trial.resumed_from = int(loaded.name.split("_")[1].split(".")[0]) if "_" in loaded.name else None
        reference_checkpoint = reference / "checkpoints" / loaded.name
        trial.corrupted_loaded = (loaded.name.startswith(".")  # a staging folder
                                  or not reference_checkpoint.exists()
                                  or not same_tensors(checkpoint_tensors(reference_checkpoint),
                                                      checkpoint_tensors(run_dir / "checkpoints" / loaded.name)))
    if code != 0:
        problems.append(f"the resumed run exited with {code}: {output[-500:]}")
    if trial.resumed_from != expected:
        problems.append(f"resumed from {trial.resumed_from}, the newest complete checkpoint was {expected}")
    for partial in unfinished:
        if partial > expected and f"skipping incomplete checkpoint {ckpt.staging_dir(run_dir / 'checkpoints', partial)}" not in output:
            problems.append(f"no word about skipping the unfinished write of {partial}")
    problems += differences(run_dir, reference, iterations)
    trial.problems = tuple(problems)
    trial.resumed_correctly = not problems and not trial.corrupted_loaded
    return trial


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=12, help="kill-and-resume trials (half of each kind)")
    parser.add_argument("--iterations", type=int, default=6, help="iterations of every run")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill moments")
    parser.add_argument("--keep", default="", help="keep the runs in this folder (default: a temporary one, removed)")
    args = parser.parse_args()
    if args.iterations < 3:
        parser.error("--iterations must be at least 3")
    torch.set_num_threads(1)
    logging.getLogger("tensorboard").setLevel(logging.ERROR)  # its note on each purge of stale events
    rng = random.Random(args.seed)
    model = build_tiny(DEFAULT_CACHE_DIR, TEST_SPEC, log=lambda message: None)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_faults-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        started = time.monotonic()
        straight = Training(train_flags(model, work / "reference", args.iterations), work / "reference", "run")
        if straight.finish() != 0:
            print(straight.output()[-3000:])
            return 1
        reference = find_run_dir(work / "reference")
        trials = []
        for number in range(args.trials):
            mode = ("iteration", "write")[number % 2]
            trial = run_trial(number, mode, model, reference, work, args.iterations, rng)
            trials.append(trial)
            status = "ok" if trial.resumed_correctly else "FAILED: " + "; ".join(trial.problems)[:400]
            where = trial.landed + (f" ({trial.write_progress})" if trial.write_progress else "")
            print(f"trial {number + 1:>2}: aimed at {mode:<9} landed in {where:<50} resumed from iteration "
                  f"{trial.resumed_from}, in {trial.resume_seconds:.2f} s: {status}", flush=True)
        report(trials, time.monotonic() - started)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    good = all(t.resumed_correctly for t in trials) and not any(t.corrupted_loaded or t.damaged_left for t in trials)
    return 0 if good else 1


def report(trials: list[Trial], seconds: float) -> None:
    resumes = [t.resume_seconds for t in trials if t.resume_seconds]
    loads = [t.load_seconds for t in trials if t.load_seconds]
    print()
    print(f"trials:                       {len(trials)}")
    for where in ("iteration", "write"):
        print(f"  kills landed in {where:<10}  {sum(t.landed == where for t in trials)}")
    for progress in sorted({t.write_progress for t in trials if t.write_progress}):
        print(f"    inside a write, {progress:<40} {sum(t.write_progress == progress for t in trials)}")
    print(f"resumed correctly:            {sum(t.resumed_correctly for t in trials)}/{len(trials)}")
    print(f"corrupted checkpoints loaded: {sum(t.corrupted_loaded for t in trials)}")
    print(f"damaged checkpoints left:     {sum(t.damaged_left for t in trials)}")
    if resumes:
        print(f"time to resume (process launch to checkpoint loaded): mean {statistics.mean(resumes):.2f} s, "
              f"max {max(resumes):.2f} s")
    if loads:
        print(f"  of which finding, verifying and loading the checkpoint: mean {1000 * statistics.mean(loads):.1f} ms, "
              f"max {1000 * max(loads):.1f} ms")
    print(f"bench wall time: {seconds:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
