"""Checkpoints: both adapters, the value head, both optimizers, every RNG, the iteration.

Layout of ``checkpoints/iter_<n>/``:
- ``actor/``: the actor LoRA adapter in PEFT's format (``PeftModel.from_pretrained`` loads it);
- ``critic/``: the critic adapter, plus ``value_head.safetensors`` (the head belongs to it);
  absent for critic-free algorithms, which have neither;
- ``optimizers.pt``: both optimizers' state (tensors, numbers, strings, lists and dicts);
- ``rng_rank<r>.pt``: each process's RNG states (Python, NumPy, torch, the run's own generators),
  as tensors and plain numbers too;
- ``state.json``: iteration, samples seen and whatever else the runner keeps;
- ``manifest.json``: every other file with its size and sha256 (see ``fcenv.algos.store.manifest``).

Writing is crash-safe: the files go to ``.iter_<n>.partial/`` beside the final place, are
flushed to disk, the manifest is written last and the folder is renamed into place in one
step. So a folder named ``iter_<n>`` is always a finished write; a kill at any moment leaves
at most a ``.partial`` folder, which resuming skips (and the next write of that iteration
replaces). Loading checks the manifest first, so a file damaged later gives a
``CheckpointError`` naming the folder, the file and the problem, never a torch traceback.

Nothing is loaded through full pickle: the ``.pt`` files are read with
``torch.load(weights_only=True)``, which builds tensors and plain containers and refuses any
other object. The manifest holds hashes, not a signature (anyone who can write a file can
rewrite its hash), so it guards against damage; the restricted loading guards against a hostile
file, which is refused with a ``CheckpointError`` naming it instead of running its code.
"""

from __future__ import annotations

import json
import pickle
import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from peft import get_peft_model_state_dict, set_peft_model_state_dict
from safetensors.torch import load_file, save_file

from fcenv.algos.model.policy import ACTOR, CRITIC, LoraSettings, Policy
from fcenv.algos.store.manifest import (
    CheckpointError,
    fsync_path,
    read_manifest,
    verify_file,
    verify_folder,
    write_manifest,
)

__all__ = ["CheckpointError"]

_ITER = re.compile(r"^iter_(\d+)$")
_PARTIAL = re.compile(r"^\.iter_(\d+)\.partial$")
ADAPTER_WEIGHTS = "adapter_model.safetensors"  # PEFT's weights file in an adapter folder
ACTOR_WEIGHTS = f"{ACTOR}/{ADAPTER_WEIGHTS}"
CRITIC_WEIGHTS = f"{CRITIC}/adapter_model.safetensors"
VALUE_HEAD = f"{CRITIC}/value_head.safetensors"
OPTIMIZERS = "optimizers.pt"
STATE = "state.json"
MODEL_FILES = [ACTOR_WEIGHTS, CRITIC_WEIGHTS, VALUE_HEAD, OPTIMIZERS, STATE]
ACTOR_ONLY_FILES = [ACTOR_WEIGHTS, OPTIMIZERS, STATE]


def model_files(policy: Policy) -> list[str]:
    return MODEL_FILES if policy.has_critic else ACTOR_ONLY_FILES


def checkpoint_name(iteration: int) -> str:
    return f"iter_{iteration:06d}"


def rng_file(rank: int) -> str:
    return f"rng_rank{rank}.pt"


def staging_dir(checkpoints: Path, iteration: int) -> Path:
    return checkpoints / f".{checkpoint_name(iteration)}.partial"


# ---- RNG states ---------------------------------------------------------------------------
def rng_state(extra: dict[str, Any]) -> dict[str, Any]:
    kind, keys, *rest = np.random.get_state()
    state = {
        "python": random.getstate(),
        # The key array as a list of ints: weights-only loading builds no NumPy arrays.
        "numpy": (kind, keys.tolist(), *rest),
        "torch": torch.get_rng_state(),
        "extra": extra,
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict[str, Any]) -> dict[str, Any]:
    random.setstate(state["python"])
    kind, keys, *rest = state["numpy"]
    np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), *rest))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    return state["extra"]


# ---- writing ------------------------------------------------------------------------------
def begin(stage: Path) -> None:
    """A fresh staging folder: the leftovers of a killed write of the same iteration go."""
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)


def write_rng(stage: Path, rank: int, extra: dict[str, Any]) -> None:
    stage.mkdir(parents=True, exist_ok=True)
    torch.save(rng_state(extra), stage / rng_file(rank))


def write_model_state(stage: Path, policy: Policy, actor_optimizer, critic_optimizer, state: dict[str, Any]) -> None:
    """The main process's part: adapters, value head, optimizers, state."""
    stage.mkdir(parents=True, exist_ok=True)
    # Adapters only: the frozen output layer (saved by PEFT when it is adapted) is in the base folder.
    policy.model.save_pretrained(stage, selected_adapters=[ACTOR, CRITIC] if policy.has_critic else [ACTOR],
                                 save_embedding_layers=False)
    (stage / "README.md").unlink(missing_ok=True)  # PEFT's model card template, not ours
    optimizers = {"actor": actor_optimizer.state_dict()}
    if policy.has_critic:
        head = {k: v.detach().cpu().contiguous() for k, v in policy.value_head.state_dict().items()}
        save_file(head, stage / VALUE_HEAD)
        optimizers["critic"] = critic_optimizer.state_dict()
    torch.save(optimizers, stage / OPTIMIZERS)
    (stage / STATE).write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")


def publish(stage: Path, iteration: int) -> Path:
    """Manifest last, then one rename: ``iter_<n>`` appears complete or not at all."""
    write_manifest(stage, {"iteration": iteration})
    final = stage.parent / checkpoint_name(iteration)
    old = stage.parent / f".{final.name}.old"
    if old.exists():
        shutil.rmtree(old)
    if final.exists():  # a resumed run saving an iteration again: move the old copy aside first
        final.rename(old)
    stage.rename(final)
    fsync_path(stage.parent)
    if old.exists():
        shutil.rmtree(old)
    return final


# ---- finding ------------------------------------------------------------------------------
def _numbered(folder: Path, pattern: re.Pattern) -> list[tuple[int, Path]]:
    if not folder.is_dir():
        return []
    return sorted((int(m.group(1)), p) for p in folder.iterdir() if (m := pattern.match(p.name)) and p.is_dir())


def complete_checkpoints(run_dir: Path) -> list[Path]:
    """Published checkpoints of a run, oldest first (a published folder is a finished write)."""
    return [p for _, p in _numbered(Path(run_dir) / "checkpoints", _ITER)]


def incomplete_checkpoints(run_dir: Path) -> list[Path]:
    """Staging folders of writes that never finished (the process was killed during a save)."""
    return [p for _, p in _numbered(Path(run_dir) / "checkpoints", _PARTIAL)]


def latest_checkpoint(path: str | Path) -> Path | None:
    """``path`` itself if it is a checkpoint, else the newest complete one under ``path/checkpoints``."""
    path = Path(path)
    if _PARTIAL.match(path.name):
        raise CheckpointError(path, None, "a temporary folder of a checkpoint write that never finished; "
                                          f"resume from the run folder {run_dir_of(path)} instead")
    if _ITER.match(path.name) or (path / "manifest.json").exists() or (path / STATE).exists():
        return path
    found = complete_checkpoints(path)
    return found[-1] if found else None


def find_resume_checkpoint(path: str | Path, log: Callable[[str], None] = print) -> Path:
    """The checkpoint ``--resume path`` means, verified; says which unfinished writes it skipped."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(path, None, "no such folder")
    checkpoint = latest_checkpoint(path)
    if checkpoint is None:
        raise CheckpointError(path, None, "no complete checkpoint in this run folder (expected checkpoints/iter_<n>/)")
    if checkpoint != path:
        reached = int(_ITER.match(checkpoint.name).group(1))
        for number, partial in _numbered(path / "checkpoints", _PARTIAL):
            if number > reached:
                log(f"skipping incomplete checkpoint {partial} (its write never finished); "
                    f"using the last complete one, {checkpoint.name}")
    try:
        verify_checkpoint(checkpoint)
    except CheckpointError as exc:
        earlier = [p for p in complete_checkpoints(run_dir_of(checkpoint)) if p.name < checkpoint.name]
        hint = f"; to go on from the one before, pass --resume {earlier[-1]}" if earlier else ""
        raise CheckpointError(exc.folder, exc.file, exc.problem + hint) from None
    return checkpoint


def set_aside_later(checkpoint: Path, log: Callable[[str], None] = print) -> list[Path]:
    """Resuming from an older checkpoint than a run's newest starts another continuation:
    the later checkpoints are renamed out of the way (``.iter_<n>.superseded``, kept, not
    deleted), so that a later ``--resume`` of the run folder cannot mix the two."""
    match = _ITER.match(checkpoint.name)
    if match is None:
        return []
    moved = []
    for number, path in _numbered(checkpoint.parent, _ITER):
        if number > int(match.group(1)):
            target = path.with_name(f".{path.name}.superseded")
            if target.exists():
                shutil.rmtree(target)
            path.rename(target)
            moved.append(target)
    if moved:
        fsync_path(checkpoint.parent)
        names = ", ".join(p.name.removeprefix(".").removesuffix(".superseded") for p in moved)
        log(f"resuming from {checkpoint.name}, an older checkpoint than the run's newest: set aside {names} "
            f"(renamed to .<name>.superseded)")
    return moved


def run_dir_of(checkpoint: Path) -> Path:
    return checkpoint.parent.parent


# ---- loading ------------------------------------------------------------------------------
def verify_checkpoint(checkpoint: Path, required: list[str] = ACTOR_ONLY_FILES) -> dict[str, Any]:
    """Check every file against the manifest (and that ``required`` files are there); returns
    the manifest."""
    checkpoint = Path(checkpoint)
    if not checkpoint.is_dir():
        raise CheckpointError(checkpoint, None, "no such folder")
    return verify_folder(checkpoint, required)


# RNG files written before the states were kept as plain data hold one NumPy uint32 array (the
# MT19937 key); these constructors build arrays of plain numbers and nothing else, so such
# checkpoints still resume without opening the loader to arbitrary objects.
_LEGACY_NUMPY = (np._core.multiarray._reconstruct, np.ndarray, np.dtype, np.dtypes.UInt32DType)


def load_data(path: Path, map_location: str | None = None) -> Any:
    """A ``.pt`` file of a run folder, through weights-only unpickling: tensors, numbers,
    strings and containers load; anything else (a class, a function, a callable to run) makes
    it raise instead of running, whatever the manifest says."""
    with torch.serialization.safe_globals(list(_LEGACY_NUMPY)):
        return torch.load(path, map_location=map_location, weights_only=True)


def _refusal(exc: pickle.UnpicklingError) -> str:
    """What weights-only loading refused, without torch's advice to load the file anyway."""
    text = str(exc)
    named = re.search(r"GLOBAL ([\w.]+)|but got (<class '[^']+'>)", text)
    if named:
        # A file crafted to run code on load names a callable; its hash may well be right.
        return (f"cannot be read: refused, it holds {named.group(1) or named.group(2)}, not tensors and plain "
                "data; unpickling it could run code, so it was not loaded")
    reason = text.split("WeightsUnpickler error:")[-1].strip().split("\n")[0] if "WeightsUnpickler" in text else ""
    return f"cannot be read: not a file of tensors and plain data ({reason or type(exc).__name__})"


def _read(checkpoint: Path, name: str, reader: Callable[[Path], Any]) -> Any:
    """Read one file, turning a library's exception into a ``CheckpointError`` naming the file."""
    try:
        return reader(checkpoint / name)
    except CheckpointError:
        raise
    except pickle.UnpicklingError as exc:
        raise CheckpointError(checkpoint, name, _refusal(exc)) from None
    # safetensors, zip, EOF and JSON errors all mean the same here: the bytes are bad.
    except Exception as exc:  # noqa: BLE001
        raise CheckpointError(checkpoint, name, f"cannot be read: {type(exc).__name__}: {exc}") from None


def _check_shapes(checkpoint: Path, name: str, saved: dict[str, torch.Tensor], expected: dict[str, torch.Tensor]) -> None:
    missing = sorted(set(expected) - set(saved))
    unexpected = sorted(set(saved) - set(expected))
    if missing or unexpected:
        raise CheckpointError(checkpoint, name, f"does not fit this model: missing tensors {missing[:3]}, "
                                                f"unexpected tensors {unexpected[:3]}")
    for key, value in saved.items():
        if tuple(value.shape) != tuple(expected[key].shape):
            raise CheckpointError(checkpoint, name, f"does not fit this model: tensor {key} has shape "
                                                    f"{tuple(value.shape)}, the model's is {tuple(expected[key].shape)}")


def _load_optimizer(checkpoint: Path, optimizer, state: dict[str, Any], role: str) -> None:
    try:
        optimizer.load_state_dict(state[role])
    except (KeyError, ValueError, TypeError) as exc:
        raise CheckpointError(checkpoint, OPTIMIZERS, f"the {role} optimizer's state does not fit: {exc}") from None
    params = [p for group in optimizer.param_groups for p in group["params"]]
    for param in params:
        for key, value in optimizer.state.get(param, {}).items():
            if torch.is_tensor(value) and value.dim() > 0 and value.shape != param.shape:
                raise CheckpointError(checkpoint, OPTIMIZERS, f"the {role} optimizer's {key} has shape "
                                                              f"{tuple(value.shape)}, its parameter's is {tuple(param.shape)}")


def load_model_state(checkpoint: Path, policy: Policy, actor_optimizer, critic_optimizer) -> dict[str, Any]:
    checkpoint = Path(checkpoint)
    verify_checkpoint(checkpoint, model_files(policy))
    device = str(policy.device)
    adapters = ((ACTOR, ACTOR_WEIGHTS), (CRITIC, CRITIC_WEIGHTS)) if policy.has_critic else ((ACTOR, ACTOR_WEIGHTS),)
    for name, file in adapters:
        weights = _read(checkpoint, file, lambda p: load_file(p, device=device))
        _check_shapes(checkpoint, file, weights, get_peft_model_state_dict(policy.model, adapter_name=name))
        set_peft_model_state_dict(policy.model, weights, adapter_name=name)
    if policy.has_critic:
        head = _read(checkpoint, VALUE_HEAD, lambda p: load_file(p, device=device))
        _check_shapes(checkpoint, VALUE_HEAD, head, policy.value_head.state_dict())
        policy.value_head.load_state_dict(head)
    optimizers = _read(checkpoint, OPTIMIZERS, lambda p: load_data(p, map_location=device))
    if not isinstance(optimizers, dict):
        raise CheckpointError(checkpoint, OPTIMIZERS, "does not hold the two optimizers' states")
    _load_optimizer(checkpoint, actor_optimizer, optimizers, "actor")
    if policy.has_critic:
        _load_optimizer(checkpoint, critic_optimizer, optimizers, "critic")
    state = _read(checkpoint, STATE, lambda p: json.loads(p.read_text()))
    for key in ("iteration", "samples"):
        if not isinstance(state, dict) or not isinstance(state.get(key), int):
            raise CheckpointError(checkpoint, STATE, f"has no integer {key!r}")
    return state


def open_run(run: Path | str, name: str = "") -> tuple[dict[str, Any], Path]:
    """A training run's arguments (args.json, with what they resolved to) and one of its
    checkpoints that holds an actor adapter: ``name``, or the latest. Raises ``ConfigError``
    naming the ``--run`` folder."""
    from fcenv.algos.config import ConfigError

    run = Path(run)
    try:
        saved = json.loads((run / "args.json").read_text())
        saved["resolved"]["base_model"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"--run {run}: not a training run folder (its args.json: {type(exc).__name__}: "
                          f"{exc})") from None
    checkpoint = run / "checkpoints" / name if name else latest_checkpoint(run)
    if checkpoint is None or not (checkpoint / "actor").is_dir():
        raise ConfigError(f"--run {run}: no checkpoint {name or '(none saved)'} with an actor adapter")
    return saved, checkpoint


def load_adapter_weights(folder: Path, policy: Policy) -> None:
    """A PEFT LoRA adapter folder's weights (a checkpoint's ``actor/``, or any adapter saved
    with PEFT) into the policy's actor adapter; ``CheckpointError`` naming the folder and file
    when they cannot be read or do not fit the model."""
    folder = Path(folder)
    weights = _read(folder, ADAPTER_WEIGHTS, lambda p: load_file(p, device=str(policy.device)))
    _check_shapes(folder, ADAPTER_WEIGHTS, weights, get_peft_model_state_dict(policy.model, adapter_name=ACTOR))
    set_peft_model_state_dict(policy.model, weights, adapter_name=ACTOR)


def adapter_settings(folder: Path) -> LoraSettings:
    """The LoRA settings a PEFT adapter folder was saved with (its adapter_config.json), to build
    the actor adapter its weights fit. ``RuntimeError`` naming ``--adapter`` when it has none
    readable, or is no LoRA adapter."""
    try:
        config = json.loads((folder / "adapter_config.json").read_text())
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"--adapter {folder}: no readable adapter_config.json ({exc})") from None
    if config.get("peft_type") != "LORA":
        raise RuntimeError(f"--adapter {folder}: a {config.get('peft_type')} adapter; only LoRA adapters are supported")
    targets = config["target_modules"]
    # Trainable token rows, as PEFT saved them: {layer: [token ids]} (the same ids for each layer).
    rows = config.get("trainable_token_indices") or {}
    tokens = sorted({i for ids in (rows.values() if isinstance(rows, dict) else [rows]) for i in ids})
    layers = config.get("layers_to_transform")  # PEFT writes a list, an int or null (every layer)
    layers = tuple(layers) if isinstance(layers, list) else (layers,) if isinstance(layers, int) else ()
    return LoraSettings(r=int(config["r"]), alpha=int(config["lora_alpha"]),
                        target_modules=sorted(targets) if isinstance(targets, list) else [targets],
                        trainable_tokens=tuple(tokens), layers=layers)


def load_actor_weights(checkpoint: Path, policy: Policy) -> None:
    """Only the actor adapter of a checkpoint (to sample from a trained policy elsewhere)."""
    verify_checkpoint(Path(checkpoint), [ACTOR_WEIGHTS])
    load_adapter_weights(Path(checkpoint) / ACTOR, policy)


def load_rng(checkpoint: Path, rank: int) -> dict[str, Any]:
    checkpoint = Path(checkpoint)
    name = rng_file(rank)
    manifest = read_manifest(checkpoint)
    if name not in manifest["files"]:
        saved = sum(1 for f in manifest["files"] if f.startswith("rng_rank"))
        raise CheckpointError(checkpoint, name, f"missing: the checkpoint was saved by {saved} process(es); "
                                                "resume with the same number of processes")
    verify_file(checkpoint, manifest, name)
    state = _read(checkpoint, name, load_data)
    try:
        return restore_rng(state)
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise CheckpointError(checkpoint, name, f"not an RNG state: {type(exc).__name__}: {exc}") from None
