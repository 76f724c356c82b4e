"""Continuing a run from a checkpoint (``--resume``): what may change, and what is restored.

A resumed run is the same run: the flags that decide what is learned, from what and how it is
scored cannot change (``fcenv.algos.config.RESUME_FIXED``). Others (more --num_env_steps, another --lr) may; the change is written into
args.json ("resumes") and said. The last group only places or shows the run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fcenv.algos.config import RESUME_FIXED, TrainConfig, to_dict
from fcenv.algos.input_files import changed_since
from fcenv.algos.store import checkpoint as ckpt
from fcenv.algos.store.results import truncate_metrics, write_args
from fcenv.algos.training.setup import DataFiles, data_record

IRRELEVANT = ("resume", "results_dir", "experiment_name", "dataset_name", "cache_dir", "progress", "world_size",
              "resume_with_changed_data")


@dataclass
class Resumed:
    checkpoint: Path
    run_dir: Path
    iteration: int
    samples: int
    rng: dict[str, Any]  # this process's own generators: "tasks" (numpy) and "sampling" (torch)


def resume(path: str, config: TrainConfig, files: DataFiles, policy, actor_optimizer, critic_optimizer, rank: int, is_main: bool,
           log) -> Resumed:
    """Restore the checkpoint that ``path`` names (a run folder: its latest) into the policy and
    optimizers, after checking that the flags that define the run are the run's."""
    checkpoint = ckpt.find_resume_checkpoint(path, log)
    run_dir = ckpt.run_dir_of(checkpoint)
    try:
        saved = json.loads((run_dir / "args.json").read_text())
    except (OSError, ValueError) as exc:
        raise ckpt.CheckpointError(checkpoint, None, f"its run's args.json cannot be read ({exc})") from None
    saved.setdefault("critic_fraction", 1.0)  # runs from before the flag: a critic on every layer
    saved.setdefault("actor_fraction", 1.0)  # and an actor on every layer
    fixed = [k for k in RESUME_FIXED if k in saved and saved[k] != getattr(config, k)]
    if fixed:
        raise ckpt.CheckpointError(checkpoint, None, f"--resume: these flags differ from the run's "
                                                     f"args.json and cannot change within a run: {fixed} "
                                                     f"(leave them out: --resume takes the run's own)")
    state = ckpt.load_model_state(checkpoint, policy, actor_optimizer, critic_optimizer)
    iteration, samples = int(state["iteration"]), int(state["samples"])
    now = to_dict(config)
    changed = {k: {"from": saved[k], "to": v} for k, v in now.items()
               if k not in IRRELEVANT and k in saved and saved[k] != v}
    # Data changed since the run began (accepted with --resume_with_changed_data, else refused
    # before the model loaded): the new fingerprint is the run's from here on.
    data_changed = changed_since(saved, config, files)
    if (changed or data_changed) and is_main:
        entry = {"iteration": iteration, "changed": changed, **({"data_changed": data_changed} if data_changed else {})}
        data = {"resolved": {**saved["resolved"], "data": data_record(config, files)}} if data_changed else {}
        write_args(run_dir, {**saved, **{k: now[k] for k in changed}, **data,
                             "resumes": [*saved.get("resumes", []), entry]})
        if changed:
            log("resumed with changed flags (recorded in args.json): "
                + ", ".join(f"--{k} {c['from']} -> {c['to']}" for k, c in changed.items()))
        for line in data_changed:
            log(f"warning: resumed on changed data (--resume_with_changed_data; recorded in args.json): {line}")
    elif is_main:
        log(f"resuming with the run's own flags ({run_dir / 'args.json'})")
    rng = ckpt.load_rng(checkpoint, rank)
    if is_main:
        ckpt.set_aside_later(checkpoint, log)
        truncate_metrics(run_dir, iteration)
    log(f"resumed from {checkpoint} at iteration {iteration}")
    return Resumed(checkpoint, run_dir, iteration, samples, rng)
