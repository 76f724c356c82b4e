"""The long steps a person waits on show their progress: the tiny model's build (its
pretraining steps), the trainer's warm-up, and ``fcenv process-rewards``."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("peft")
from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT, TINY_TRAIN, build_tiny
from fcenv.data import load_tasks
from harness.tiny_test_model import TEST_SPEC

ROOT = Path(__file__).resolve().parents[2]


def test_the_tiny_build_shows_its_pretraining_steps(tmp_path, capfd):
    build_tiny(tmp_path, dataclasses.replace(TEST_SPEC, pretrain_steps=5), dataset_path=TINY_TRAIN)
    err = capfd.readouterr().err
    assert "pretraining the tiny model" in err and "5/5" in err and "loss=" in err


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_the_warm_up_shows_its_steps_and_no_progress_hides_them(tiny_model, tmp_path):
    flags = ["--model_name_or_path", str(tiny_model), "--system_prompt", TINY_SYSTEM_PROMPT, "--hide_function_docs",
             "--results_dir", str(tmp_path), "--n_rollout_threads", "2", "--num_env_steps", "2", "--max_new_tokens", "8",
             "--lora_r", "4", "--eval_interval", "0", "--warmup_steps", "3"]
    shown = run("train_fctncalling.py", *flags)
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert "actor warm-up" in shown.stderr and "3/3" in shown.stderr
    hidden = run("train_fctncalling.py", *flags, "--no-progress")
    assert hidden.returncode == 0 and "actor warm-up:" not in hidden.stderr, hidden.stderr[-3000:]


def test_process_rewards_shows_its_completions(tiny_model, tmp_path):
    task = load_tasks(TINY_TRAIN)[0]
    (tmp_path / "r.jsonl").write_text(json.dumps({"id": task.id, "result": "[f()]"}) + "\n")
    done = run("-m", "fcenv", "process-rewards", "--model_name_or_path", str(tiny_model), "--system_prompt",
               TINY_SYSTEM_PROMPT, "--dataset_path", "tiny_train", "--from_results", str(tmp_path / "r.jsonl"),
               "--completions", "3", "--out", str(tmp_path / "lpr"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Monte Carlo completions" in done.stderr and "3/3" in done.stderr
