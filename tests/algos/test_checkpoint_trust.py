"""A checkpoint is data, never code: ``--resume`` refuses a ``.pt`` file that would run
something when unpickled, even when the manifest's hashes were recomputed to match it (the
manifest guards against damage, not against a hostile file)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("peft")
from fcenv.algos.store import checkpoint as ckpt
from fcenv.algos.store.manifest import CheckpointError, write_manifest
from fcenv.algos.training.loop import Runner
from tests.algos.test_checkpoint import config


class Payload:
    """Unpickling this copies a file to ``marker``: the code a hostile checkpoint would run."""

    def __init__(self, source: Path, marker: Path):
        self.source, self.marker = source, marker

    def __reduce__(self):
        return shutil.copyfile, (str(self.source), str(self.marker))


@pytest.fixture(scope="module")
def run_dir(tiny_model, tmp_path_factory) -> Path:
    results = tmp_path_factory.mktemp("trust")
    return Runner(config(tiny_model, results, 1), log=lambda m: None).run()


def hostile_copy(run_dir: Path, into: Path, name: str, content) -> tuple[Path, Path]:
    """A copy of the run whose newest checkpoint's ``name`` holds ``content``, manifest rewritten."""
    copy = into / "run"
    shutil.copytree(run_dir, copy)
    checkpoint = ckpt.latest_checkpoint(copy)
    torch.save(content, checkpoint / name)
    (checkpoint / "manifest.json").unlink()
    write_manifest(checkpoint, {"iteration": 1})
    return copy, checkpoint


@pytest.mark.parametrize("name", ["optimizers.pt", "rng_rank0.pt"])
def test_resume_refuses_a_crafted_pickle_with_a_matching_manifest(name, tiny_model, run_dir, tmp_path):
    marker = tmp_path / "payload-ran"
    payload = Payload(tmp_path / "source", marker)
    (tmp_path / "source").write_text("ran")
    if name == "optimizers.pt":
        content = {"actor": payload, "critic": {}}
    else:  # a real RNG state, one value replaced
        content = {**ckpt.rng_state({"tasks": {}, "sampling": torch.Generator().get_state()}), "python": payload}
    copy, checkpoint = hostile_copy(run_dir, tmp_path, name, content)
    ckpt.verify_checkpoint(checkpoint)  # the hashes match: only the loading can tell

    with pytest.raises(CheckpointError) as error:
        Runner(config(tiny_model, tmp_path / "results", 2, "--resume", str(copy)), log=lambda m: None)
    assert not marker.exists(), "the checkpoint's payload ran"
    assert error.value.file == name and error.value.folder == checkpoint
    message = str(error.value)
    assert f"{checkpoint}: {name}: cannot be read: refused" in message and "shutil.copyfile" in message
    assert "weights_only` set to `False`" not in message  # torch's advice to load it anyway is not repeated


def test_rng_files_hold_only_tensors_and_plain_data(run_dir):
    """What a checkpoint writes loads with weights-only unpickling and nothing allowed beyond it."""
    checkpoint = ckpt.latest_checkpoint(run_dir)
    for name in ("optimizers.pt", "rng_rank0.pt"):
        torch.load(checkpoint / name, weights_only=True)


def test_a_legacy_rng_file_still_resumes(run_dir, tmp_path):
    """RNG files from before held NumPy's key as an array: they load (no code runs to build one)."""
    state = ckpt.rng_state({"tasks": np.random.default_rng(3).bit_generator.state,
                            "sampling": torch.Generator().get_state()})
    kind, keys, *rest = state["numpy"]
    legacy = {**state, "numpy": (kind, np.asarray(keys, dtype=np.uint32), *rest)}
    _, checkpoint = hostile_copy(run_dir, tmp_path, "rng_rank0.pt", legacy)
    np.random.seed(0)
    extra = ckpt.load_rng(checkpoint, 0)
    assert extra["tasks"] == state["extra"]["tasks"]
    assert np.array_equal(np.random.get_state()[1], np.asarray(keys, dtype=np.uint32))
