"""Checkpoints: both adapters, the value head, both optimizers, every RNG, the iteration.

Layout of ``checkpoints/iter_<n>/``:
- ``actor/``: the actor LoRA adapter in PEFT's format (``PeftModel.from_pretrained`` loads it);
- ``critic/``: the critic adapter, plus ``value_head.safetensors`` (the head belongs to it);
- ``optimizers.pt``: both optimizers' state;
- ``rng_rank<r>.pt``: each process's RNG states (Python, NumPy, torch, the run's own generators);
- ``state.json``: iteration, samples seen and whatever else the runner keeps.
The folder is assembled under a temporary name and renamed when complete.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch
from peft import set_peft_model_state_dict
from safetensors.torch import load_file, save_file

from algos.policy import ACTOR, CRITIC, Policy
from algos.results import atomic_write_text

_ITER = re.compile(r"^iter_(\d+)$")


def checkpoint_name(iteration: int) -> str:
    return f"iter_{iteration:06d}"


def staging_dir(checkpoints: Path, iteration: int) -> Path:
    return checkpoints / f".{checkpoint_name(iteration)}.partial"


def rng_state(extra: dict[str, Any]) -> dict[str, Any]:
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
        "extra": extra,
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict[str, Any]) -> dict[str, Any]:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    return state["extra"]


def write_rng(stage: Path, rank: int, extra: dict[str, Any]) -> None:
    stage.mkdir(parents=True, exist_ok=True)
    torch.save(rng_state(extra), stage / f"rng_rank{rank}.pt")


def write_model_state(stage: Path, policy: Policy, actor_optimizer, critic_optimizer, state: dict[str, Any]) -> None:
    """The main process's part: adapters, value head, optimizers, state."""
    stage.mkdir(parents=True, exist_ok=True)
    policy.model.save_pretrained(stage, selected_adapters=[ACTOR, CRITIC])
    (stage / "README.md").unlink(missing_ok=True)  # PEFT's model card template, not ours
    head = {k: v.detach().cpu().contiguous() for k, v in policy.value_head.state_dict().items()}
    save_file(head, stage / CRITIC / "value_head.safetensors")
    torch.save({"actor": actor_optimizer.state_dict(), "critic": critic_optimizer.state_dict()},
               stage / "optimizers.pt")
    atomic_write_text(stage / "state.json", json.dumps(state, indent=2, sort_keys=True) + "\n")


def publish(stage: Path, iteration: int) -> Path:
    final = stage.parent / checkpoint_name(iteration)
    if final.exists():
        shutil.rmtree(final)
    stage.rename(final)
    return final


def latest_checkpoint(path: str | Path) -> Path | None:
    """``path`` itself if it is a checkpoint, else the newest one under ``path/checkpoints``."""
    path = Path(path)
    if (path / "state.json").exists():
        return path
    folder = path / "checkpoints"
    if not folder.is_dir():
        return None
    found = sorted((int(m.group(1)), p) for p in folder.iterdir() if (m := _ITER.match(p.name)))
    return found[-1][1] if found else None


def run_dir_of(checkpoint: Path) -> Path:
    return checkpoint.parent.parent


def load_model_state(checkpoint: Path, policy: Policy, actor_optimizer, critic_optimizer) -> dict[str, Any]:
    device = policy.device
    for name in (ACTOR, CRITIC):
        weights = load_file(checkpoint / name / "adapter_model.safetensors", device=str(device))
        result = set_peft_model_state_dict(policy.model, weights, adapter_name=name)
        unexpected = getattr(result, "unexpected_keys", [])
        if unexpected:
            raise ValueError(f"{checkpoint / name} does not fit this model: unexpected {unexpected[:3]}")
    policy.value_head.load_state_dict(load_file(checkpoint / CRITIC / "value_head.safetensors", device=str(device)))
    # Our own files, written by write_model_state: they hold optimizer state, not just tensors.
    optimizers = torch.load(checkpoint / "optimizers.pt", map_location=device, weights_only=False)
    actor_optimizer.load_state_dict(optimizers["actor"])
    critic_optimizer.load_state_dict(optimizers["critic"])
    return json.loads((checkpoint / "state.json").read_text())


def load_rng(checkpoint: Path, rank: int) -> dict[str, Any]:
    path = checkpoint / f"rng_rank{rank}.pt"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: resume with the same number of processes")
    return restore_rng(torch.load(path, weights_only=False))
