"""Tiny training runs and CLI invocations shared by the algos, cli and env tests."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from fcenv.algos.config import parse_config
from fcenv.algos.tiny.build import BUNDLED_EVAL, MULTI_TURN_TRAIN, TINY_SYSTEM_PROMPT
from fcenv.algos.training.loop import Runner

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "train_fctncalling.py"
MULTI_TURN_EVAL = BUNDLED_EVAL[MULTI_TURN_TRAIN]


def make_runner(model, results, *extra: str) -> Runner:
    args = ["--model_name_or_path", str(model), "--system_prompt", TINY_SYSTEM_PROMPT, "--hide_function_docs",
            "--results_dir", str(results), "--n_rollout_threads", "4", "--num_env_steps", "8",
            "--max_new_tokens", "24", "--ppo_epoch", "1", "--num_mini_batch", "2", "--lora_r", "4", "--lr", "1e-2",
            "--eval_interval", "0", "--save_interval", "1", "--no-progress", *extra]
    return Runner(parse_config(args), log=lambda message: None)


def tiny_flags(model: Path, results: Path) -> list[str]:
    return ["--model_name_or_path", str(model), "--system_prompt", TINY_SYSTEM_PROMPT, "--hide_function_docs", "--results_dir", str(results),
            "--n_rollout_threads", "2", "--num_env_steps", "4", "--max_new_tokens", "8", "--lora_r", "4",
            "--save_interval", "1", "--eval_interval", "1", "--eval_episodes", "3", "--ppo_epoch", "1",
            "--no-progress"]


def fcenv(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fcenv", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def process_rewards_flags(model: Path, dataset: Path, **settings) -> argparse.Namespace:
    """``fcenv process-rewards``' flags for ``model`` and ``dataset`` as its own parser defaults
    them (a flag the command gains needs no test edit), with ``settings`` over them."""
    from fcenv.cli import build_parser

    args = build_parser().parse_args(["process-rewards", "--out", "unused", "--model_name_or_path", str(model),
                                      "--dataset_path", str(dataset)])
    return argparse.Namespace(**{**vars(args), "run": "", **settings})
