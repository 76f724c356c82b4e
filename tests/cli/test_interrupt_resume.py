"""Ctrl-C and ``--resume RUN`` alone: an interrupted run ends cleanly, names the checkpoint it
continues from and the command, and that command alone continues the run as it was."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("peft")
from safetensors.torch import load_file

from fcenv.algos.config import parse_config
from fcenv.algos.store.checkpoint import find_resume_checkpoint
from fcenv.algos.store.results import read_metrics
from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT
from fcenv.algos.training.loop import Runner

ROOT = Path(__file__).resolve().parents[2]
THREADS = 2


def flags(model: Path, results: Path, iterations: int) -> list[str]:
    return ["--model_name_or_path", str(model), "--system_prompt", TINY_SYSTEM_PROMPT, "--hide_function_docs",
            "--results_dir", str(results), "--n_rollout_threads", str(THREADS),
            "--num_env_steps", str(THREADS * iterations), "--max_new_tokens", "8", "--lora_r", "4", "--lr", "5e-3",
            "--ppo_epoch", "1", "--save_interval", "1", "--eval_interval", "2", "--eval_episodes", "3", "--seed", "3",
            "--no-progress"]


# Ctrl-C's usual disposition in the trainer. A shell starts a background job (`make test &`,
# nohup) with SIGINT ignored, every process under it inherits that, and Python then installs no
# KeyboardInterrupt handler: the trainer would never see the test's Ctrl-C. So the child resets
# SIGINT to its default and execs the command, as a terminal would have started it.
FROM_A_TERMINAL = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                   "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


def test_ctrl_c_ends_cleanly_and_names_the_checkpoint_and_the_command(tiny_model, tmp_path):
    process = subprocess.Popen([sys.executable, "-c", FROM_A_TERMINAL, "-m", "fcenv", "train",
                                *flags(tiny_model, tmp_path, 10_000)],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while not list(tmp_path.glob("**/checkpoints/iter_000002")):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    run_dir = next(tmp_path.glob("**/run1"))
    checkpoint = find_resume_checkpoint(run_dir, log=lambda message: None)
    assert f"the run continues from its last checkpoint, {checkpoint}" in err, err
    assert f"continue it with: fcenv train --resume {run_dir}\n" in err + "\n", err

    # The printed command continues the run with its own flags; a flag given changes, and is said.
    more = (int(checkpoint.name.removeprefix("iter_")) + 1) * THREADS
    result = subprocess.run([sys.executable, "-m", "fcenv", "train", "--resume", str(run_dir),
                             "--num_env_steps", str(more)], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"--num_env_steps {THREADS * 10_000} -> {more}" in result.stdout
    args = json.loads((run_dir / "args.json").read_text())
    assert args["max_new_tokens"] == 8 and args["lora_r"] == 4 and args["system_prompt"] == TINY_SYSTEM_PROMPT
    assert read_metrics(run_dir)[-1]["samples"] == more


def adapter(checkpoint: Path) -> dict:
    return load_file(checkpoint / "actor" / "adapter_model.safetensors")


def test_resume_alone_gives_the_uninterrupted_run(tiny_model, tmp_path):
    straight = Runner(parse_config(flags(tiny_model, tmp_path / "a", 3)), log=lambda message: None)
    run_dir = straight.run()
    # The same run killed after its checkpoint at iteration 1: its later checkpoints never written.
    killed = tmp_path / "b" / "run1"
    shutil.copytree(run_dir, killed)
    for name in ("iter_000002", "iter_000003"):
        shutil.rmtree(killed / "checkpoints" / name)

    messages = []
    resumed = Runner(parse_config(["--resume", str(killed)]), log=messages.append)
    assert resumed.iteration == 1 and resumed.config == straight.config.__class__(
        **{**vars(straight.config), "resume": str(killed)})
    assert resumed.run() == killed
    assert any("resuming with the run's own flags" in m for m in messages), messages

    expected, got = adapter(run_dir / "checkpoints" / "iter_000003"), adapter(killed / "checkpoints" / "iter_000003")
    assert expected.keys() == got.keys()
    assert all((expected[k] == got[k]).all() for k in expected)

    def same(m):  # the metrics less wall-clock timings, which differ run to run
        return {k: v for k, v in m.items() if not k.startswith("perf/")}

    assert [same(m) for m in read_metrics(killed)] == [same(m) for m in read_metrics(run_dir)]
