"""``fcenv train --adapter``: a run's actor starts from an adapter (a supervised warm-up, or an
earlier run's checkpoint) instead of a fresh one, so RL can go on from a warm-up already paid
for under other RL settings. The start is the adapter exactly; one of another shape is refused
before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("peft")
from safetensors.torch import load_file

from tests.support.runs import fcenv, make_runner, tiny_flags

ACTOR = Path("actor") / "adapter_model.safetensors"


@pytest.fixture(scope="module")
def trained(tiny_model, tmp_path_factory) -> Path:
    """The last checkpoint of a short run: an adapter that is not the fresh one."""
    run = make_runner(tiny_model, tmp_path_factory.mktemp("first"), "--num_env_steps", "8").run()
    return sorted((run / "checkpoints").iterdir())[-1]


def test_the_run_starts_from_the_adapter_and_trains_on_from_it(tiny_model, trained, tmp_path):
    runner = make_runner(tiny_model, tmp_path, "--adapter", str(trained / "actor"), "--algorithm_name", "GRPO",
                         "--group_size", "2", "--advantage_estimator", "batch", "--num_env_steps", "8")
    run = runner.run()
    given = load_file(trained / ACTOR)
    start = load_file(run / "checkpoints" / "iter_000000" / ACTOR)
    assert given.keys() == start.keys() and all((given[k] == start[k]).all() for k in given)
    end = load_file(sorted((run / "checkpoints").iterdir())[-1] / ACTOR)
    assert any(not (end[k] == start[k]).all() for k in start)  # and RL went on from there


def test_an_adapter_of_another_shape_is_refused_before_the_run_folder(tiny_model, trained, tmp_path):
    done = fcenv("train", *tiny_flags(tiny_model, tmp_path), "--adapter", str(trained / "actor"), "--lora_r", "8")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"--adapter {trained / 'actor'}" in done.stderr and "--lora_r 8 (the adapter's: 4)" in done.stderr
    done = fcenv("train", *tiny_flags(tiny_model, tmp_path), "--adapter", str(tmp_path / "none"))
    assert done.returncode == 2 and "--adapter" in done.stderr and "no such folder" in done.stderr
    assert not list(tmp_path.rglob("args.json"))
