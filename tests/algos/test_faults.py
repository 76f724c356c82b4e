"""Fault tolerance of training: SIGKILL mid-iteration and mid-checkpoint-write, damaged
checkpoints, datasets with bad entries.

Real ``train_fctncalling.py`` processes on the tiny model, killed at moments found by
polling the run folder (and frozen with SIGSTOP to look before killing, so the tests never
depend on how fast the machine is). A killed-and-resumed run must end exactly like an
uninterrupted run of the same length: the same checkpoints, metrics and TensorBoard
scalars, each iteration logged once.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gymnasium as gym
import pytest
import torch

pytest.importorskip("peft")
import fcenv  # noqa: F401  (registers the environment id)
from fcenv.algos.config import parse_config
from fcenv.algos.model.loading import load_model
from fcenv.algos.model.policy import LoraSettings, Policy
from fcenv.algos.ppo.update import make_optimizers
from fcenv.algos.store import checkpoint as ckpt
from fcenv.algos.store.manifest import CheckpointError, write_manifest
from fcenv.algos.store.results import read_metrics
from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT, TINY_TRAIN
from fcenv.algos.training.loop import Runner
from fcenv.data import DatasetError
from harness.faults import (
    THREADS,
    Training,
    checkpoint_tensors,
    differences,
    find_run_dir,
    partials,
    published,
    same_tensors,
    scalars,
    stop_between_writes,
    stop_inside_write,
    train_flags,
)

ITERATIONS = 8


@pytest.fixture(scope="module")
def straight(tiny_model, tmp_path_factory) -> Path:
    """An uninterrupted run: what every killed-and-resumed run must end up as."""
    results = tmp_path_factory.mktemp("straight")
    training = Training(train_flags(tiny_model, results, ITERATIONS), results, "straight")
    assert training.finish() == 0, training.output()[-3000:]
    return find_run_dir(results)


def wait_for_run_dir(training: Training, results: Path) -> Path:
    assert training.wait_for(lambda: find_run_dir(results) is not None), training.output()[-3000:]
    return find_run_dir(results)


def assert_same_as_straight(run_dir: Path, straight: Path) -> None:
    """Checkpoints, metrics and TensorBoard scalars (each iteration once, in order) equal the
    uninterrupted run's; no unfinished write is left over."""
    assert differences(run_dir, straight, ITERATIONS) == []
    rewards = scalars(run_dir)["rollout/reward"]
    assert [step for step, _ in rewards] == [THREADS * i for i in range(1, ITERATIONS + 1)]
    assert [m["samples"] for m in read_metrics(run_dir)] == [THREADS * i for i in range(0, ITERATIONS + 1)]


def adapter_tensors(runner: Runner) -> dict[str, torch.Tensor]:
    from peft import get_peft_model_state_dict

    tensors = {}
    for name, file in (("actor", ckpt.ACTOR_WEIGHTS), ("critic", ckpt.CRITIC_WEIGHTS)):
        state = get_peft_model_state_dict(runner.policy.model, adapter_name=name)
        tensors.update({f"{file}:{k}": v.detach().clone() for k, v in state.items()})
    tensors.update({f"{ckpt.VALUE_HEAD}:{k}": v.detach().clone() for k, v in runner.policy.value_head.state_dict().items()})
    return tensors


# ---- SIGKILL ------------------------------------------------------------------------------
def test_kill_mid_iteration_resumes_from_the_last_checkpoint(tiny_model, straight, tmp_path):
    results = tmp_path / "results"
    flags = train_flags(tiny_model, results, ITERATIONS)
    first = Training(flags, tmp_path, "first")
    run_dir = wait_for_run_dir(first, results)
    stop_between_writes(first, run_dir, after=3)
    last = max(published(run_dir))
    first.kill()
    assert 3 <= last < ITERATIONS

    # The Python API first, on a copy: the resumed runner holds exactly what was saved.
    copy = tmp_path / "copy" / "run1"
    shutil.copytree(run_dir, copy)
    runner = Runner(parse_config([*flags, "--resume", str(copy)]), log=lambda message: None)
    saved = ckpt.complete_checkpoints(copy)[-1]
    assert (runner.iteration, runner.samples) == (last, THREADS * last)
    weights = {k: v for k, v in checkpoint_tensors(saved).items() if "safetensors" in k}
    assert same_tensors(adapter_tensors(runner), weights)
    del runner

    resumed = Training([*flags, "--resume", str(run_dir)], tmp_path, "resumed")
    assert resumed.finish() == 0, resumed.output()[-3000:]
    checkpoint = run_dir / "checkpoints" / ckpt.checkpoint_name(last)
    assert f"resumed from {checkpoint} at iteration {last}" in resumed.output()
    assert_same_as_straight(run_dir, straight)


def test_resuming_an_older_checkpoint_sets_the_later_ones_aside(tiny_model, straight, tmp_path):
    run_dir = tmp_path / "run1"
    shutil.copytree(straight, run_dir)
    older = run_dir / "checkpoints" / ckpt.checkpoint_name(5)
    flags = [*train_flags(tiny_model, tmp_path, ITERATIONS), "--resume", str(older)]
    messages = []
    runner = Runner(parse_config(flags), log=messages.append)
    assert runner.iteration == 5 and published(run_dir) == [0, 1, 2, 3, 4, 5]
    later = [run_dir / "checkpoints" / f".{ckpt.checkpoint_name(k)}.superseded" for k in (6, 7, 8)]
    assert all(path.is_dir() for path in later)
    assert any("set aside iter_000006, iter_000007, iter_000008" in m for m in messages)
    assert [m["iteration"] for m in read_metrics(run_dir)] == [0, 1, 2, 3, 4, 5]
    runner.run()
    # The continuation in this process equals the uninterrupted run, TensorBoard included:
    # the events the first continuation logged after iteration 5 are purged.
    assert_same_as_straight(run_dir, straight)


# Moments of a checkpoint write, in the order it reaches them: the staging folder just made,
# the actor adapter saved, the optimizers saved, and every file plus the manifest written
# with only the rename to come.
WRITE_PHASES = ("", "actor/adapter_model.safetensors", "optimizers.pt", "manifest.json")


def test_kill_during_checkpoint_writes_resumes_from_the_previous_one(tiny_model, straight, tmp_path):
    results = tmp_path / "results"
    flags = train_flags(tiny_model, results, ITERATIONS)
    training = Training(flags, tmp_path, "run0")
    run_dir = wait_for_run_dir(training, results)
    first = 2  # checkpoint 1 must exist to resume from
    killed = []
    for attempt, phase in enumerate(WRITE_PHASES, start=1):
        writing = stop_inside_write(training, run_dir, first, phase)
        complete = published(run_dir)
        training.kill()
        assert partials(run_dir) == [writing]  # an earlier kill's leftover was replaced by its rewrite
        assert max(complete) == writing - 1
        for number, checkpoint in zip(complete, ckpt.complete_checkpoints(run_dir)):
            ckpt.verify_checkpoint(checkpoint)  # the kill damaged no complete checkpoint
            reference = straight / "checkpoints" / ckpt.checkpoint_name(number)
            assert same_tensors(checkpoint_tensors(checkpoint), checkpoint_tensors(reference))
        killed.append(writing)
        training = Training([*flags, "--resume", str(run_dir)], tmp_path, f"run{attempt}")
        first = writing + 1
    assert training.finish() == 0, training.output()[-3000:]

    for attempt, writing in enumerate(killed, start=1):
        output = (tmp_path / f"run{attempt}.log").read_text()
        partial = ckpt.staging_dir(run_dir / "checkpoints", writing)
        assert f"skipping incomplete checkpoint {partial}" in output
        previous = run_dir / "checkpoints" / ckpt.checkpoint_name(writing - 1)
        assert f"resumed from {previous} at iteration {writing - 1}" in output
    assert_same_as_straight(run_dir, straight)


# ---- damaged checkpoints ------------------------------------------------------------------
def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _remanifest(change):
    """Damage a file and write a matching manifest: the damage must be caught on reading."""
    def damage(checkpoint: Path, name: str) -> None:
        change(checkpoint / name)
        (checkpoint / "manifest.json").unlink()
        write_manifest(checkpoint, {"iteration": 2})
    return damage


DAMAGES = {
    "manifest missing": ("manifest.json", lambda c, n: (c / n).unlink(), "incomplete"),
    "manifest not JSON": ("manifest.json", lambda c, n: (c / n).write_text("{\"files\": "), "not valid JSON"),
    "manifest malformed": ("manifest.json", lambda c, n: (c / n).write_text("[1, 2]"), "malformed"),
    "file missing": ("optimizers.pt", lambda c, n: (c / n).unlink(), "missing"),
    "tensor file truncated": ("actor/adapter_model.safetensors", lambda c, n: _truncate(c / n), "truncated"),
    "hash mismatch": ("critic/value_head.safetensors", lambda c, n: _flip_byte(c / n), "sha256"),
    "unreadable tensors": ("critic/adapter_model.safetensors", _remanifest(_truncate), "cannot be read"),
    "unreadable optimizers": ("optimizers.pt", _remanifest(lambda p: p.write_bytes(b"not a zip")), "cannot be read"),
    "unreadable state": ("state.json", _remanifest(lambda p: p.write_text("{")), "cannot be read"),
}


@pytest.fixture(scope="module")
def make_policy(tiny_model):
    def make(lora_r: int):
        config = parse_config(train_flags(tiny_model, Path("unused"), 1))
        loaded = load_model(str(tiny_model), torch.device("cpu"), system_prompt=TINY_SYSTEM_PROMPT)
        lora = LoraSettings(r=lora_r, alpha=config.lora_alpha, target_modules=list(config.lora_target_modules))
        policy = Policy(loaded.base, pad_id=loaded.pad_id, stop_ids=loaded.stop_ids, actor_lora=lora,
                        critic_fraction=config.critic_fraction)
        return policy, *make_optimizers(policy, config.lr, config.critic_lr)
    return make


def copy_checkpoint(straight: Path, into: Path, number: int = 2) -> Path:
    copy = into / "run1" / "checkpoints" / ckpt.checkpoint_name(number)
    shutil.copytree(straight / "checkpoints" / ckpt.checkpoint_name(number), copy)
    return copy


def test_an_undamaged_copy_loads(make_policy, straight, tmp_path):
    checkpoint = copy_checkpoint(straight, tmp_path)
    state = ckpt.load_model_state(checkpoint, *make_policy(4))
    assert state["iteration"] == 2 and state["samples"] == 2 * THREADS
    assert set(ckpt.load_rng(checkpoint, 0)) == {"tasks", "sampling"}


@pytest.mark.parametrize("case", sorted(DAMAGES))
def test_a_damaged_checkpoint_is_a_clear_error(case, make_policy, straight, tmp_path):
    name, damage, words = DAMAGES[case]
    checkpoint = copy_checkpoint(straight, tmp_path)
    damage(checkpoint, name)
    with pytest.raises(CheckpointError) as error:
        ckpt.load_model_state(checkpoint, *make_policy(4))
    assert error.value.folder == checkpoint and error.value.file == name
    assert str(checkpoint) in str(error.value) and name in str(error.value) and words in str(error.value)


def test_a_checkpoint_of_another_shape_is_a_clear_error(make_policy, straight, tmp_path):
    checkpoint = copy_checkpoint(straight, tmp_path)
    with pytest.raises(CheckpointError, match=r"actor/adapter_model.safetensors: does not fit this model: .*shape"):
        ckpt.load_model_state(checkpoint, *make_policy(8))


def test_missing_rng_of_a_process_is_a_clear_error(straight, tmp_path):
    checkpoint = copy_checkpoint(straight, tmp_path)
    with pytest.raises(CheckpointError, match=r"rng_rank1.pt: missing: the checkpoint was saved by 1 process"):
        ckpt.load_rng(checkpoint, 1)


def test_resume_skips_unfinished_writes_and_names_damage(tiny_model, straight, tmp_path):
    run_dir = tmp_path / "run1"
    shutil.copytree(straight, run_dir)
    partial = ckpt.staging_dir(run_dir / "checkpoints", ITERATIONS + 1)
    partial.mkdir()
    (partial / "optimizers.pt").write_bytes(b"half a file")
    messages = []
    newest = ckpt.find_resume_checkpoint(run_dir, messages.append)
    assert newest == ckpt.complete_checkpoints(run_dir)[-1]
    expected = (f"skipping incomplete checkpoint {partial} (its write never finished); "
                f"using the last complete one, {newest.name}")
    assert messages == [expected]
    with pytest.raises(CheckpointError, match="temporary folder of a checkpoint write that never finished"):
        ckpt.find_resume_checkpoint(partial)
    with pytest.raises(CheckpointError, match="no complete checkpoint"):
        ckpt.find_resume_checkpoint(tmp_path)

    _flip_byte(newest / "optimizers.pt")
    flags = [*train_flags(tiny_model, tmp_path, ITERATIONS), "--resume", str(run_dir)]
    with pytest.raises(CheckpointError, match=r"optimizers.pt: corrupt: .*pass --resume .*iter_000007"):
        Runner(parse_config(flags), log=lambda message: None)


@pytest.mark.parametrize("case", ["truncated file in the newest checkpoint", "hash mismatch in a named checkpoint"])
def test_cli_reports_a_damaged_checkpoint_without_a_traceback(case, tiny_model, straight, tmp_path):
    run_dir = tmp_path / "run1"
    shutil.copytree(straight, run_dir)
    if case.startswith("truncated"):
        target, name, words = run_dir, "actor/adapter_model.safetensors", "truncated"
        damaged = ckpt.complete_checkpoints(run_dir)[-1]
        _truncate(damaged / name)
    else:
        damaged = target = ckpt.complete_checkpoints(run_dir)[2]
        name, words = "rng_rank0.pt", "corrupt"
        _flip_byte(damaged / name)
    training = Training([*train_flags(tiny_model, tmp_path, ITERATIONS), "--resume", str(target)], tmp_path, "cli")
    assert training.finish() == 2  # found before training starts: the user's input to fix, as a flag error is
    output = training.output()
    assert f"error: checkpoint {damaged}: {name}: {words}" in output
    assert "Traceback" not in output


# ---- datasets with bad entries ------------------------------------------------------------
def bad_dataset(folder: Path) -> tuple[Path, set[tuple[int, str | None, str | None]]]:
    """Twelve tiny entries, five of them broken in different ways; returns (file, problems)."""
    entries = TINY_TRAIN.read_text().splitlines()[:12]
    answers = (TINY_TRAIN.parent / "possible_answer" / TINY_TRAIN.name).read_text().splitlines()[:12]
    ids = [json.loads(line)["id"] for line in entries]
    lines = list(entries)
    lines[1] = lines[1][: len(lines[1]) // 2]  # cut short: not JSON
    broken = json.loads(entries[3])
    broken["question"] = 5
    lines[3] = json.dumps(broken)
    broken = json.loads(entries[5])
    broken["function"] = "set_alarm"
    lines[5] = json.dumps(broken)
    lines[8] = entries[0]  # a duplicate id
    del answers[10]  # an entry without an answer
    path = folder / "bad_train.json"
    (folder / "possible_answer").mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n")
    (folder / "possible_answer" / path.name).write_text("\n".join(answers) + "\n")
    expected = {(2, None, None), (4, ids[3], "question"), (6, ids[5], "function"), (9, ids[0], "id"),
                (None, ids[10], "ground_truth")}
    return path, expected


def test_env_reports_every_bad_entry_at_once(tmp_path):
    path, expected = bad_dataset(tmp_path)
    with pytest.raises(DatasetError) as error:
        gym.make("fcenv/FunctionCalling-v0", dataset_path=str(path))
    assert {(p.line, p.entry_id, p.field) for p in error.value.problems} == expected


def test_cli_reports_every_bad_entry_at_once(tiny_model, tmp_path):
    path, expected = bad_dataset(tmp_path / "data")
    flags = [*train_flags(tiny_model, tmp_path / "results", 2), "--dataset_path", str(path)]
    training = Training(flags, tmp_path, "cli")
    assert training.finish() == 2  # refused before the model loads
    output = training.output()
    assert "Traceback" not in output
    assert f"error: --dataset_path {path}: {len(expected)} problems in the input" in output
    for line, entry_id, field in expected:
        parts = [f"line {line}" if line else None, f"entry {entry_id!r}" if entry_id else None,
                 f"field '{field}'" if field else None]
        assert any(all(p in row for p in parts if p) and ("bad_train.json" in row) for row in output.splitlines()), parts
    assert not list((tmp_path / "results").glob("*/*/*/*/run1/checkpoints"))
