"""``train_fctncalling.py`` end to end: flags, results layout, data-parallel launch."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("peft")
from fcenv.algos.config import build_parser, parse_config
from fcenv.algos.store.results import read_metrics
from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT
from tests.support.runs import SCRIPT, tiny_flags

ROOT = Path(__file__).resolve().parents[2]
PRIOR_FLAGS = ["--seed", "--env_name", "--algorithm_name", "--experiment_name", "--num_mini_batch", "--ppo_epoch",
               "--lr", "--critic_lr", "--dataset_path", "--model_name_or_path", "--n_rollout_threads",
               "--gradient_cp_steps", "--max_new_tokens", "--save_interval", "--num_env_steps"]


def run(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False)


def test_prior_flags_are_accepted():
    options = {a for action in build_parser()._actions for a in action.option_strings}
    assert set(PRIOR_FLAGS) <= options
    config = parse_config(["--algorithm_name", "APPO", "--lr", "1e-4", "--num_env_steps", "100",
                           "--lora_target_modules", "q_proj", "v_proj", "--no-use_huber_loss"])
    assert config.algorithm_name == "APPO" and config.lr == 1e-4 and config.num_env_steps == 100
    assert config.lora_target_modules == ["q_proj", "v_proj"]


def test_unknown_and_invalid_flags_are_errors():
    result = run(sys.executable, str(SCRIPT), "--no_such_flag", "1")
    assert result.returncode == 2 and "unrecognized arguments: --no_such_flag" in result.stderr
    result = run(sys.executable, str(SCRIPT), "--algorithm_name", "POAD")
    assert result.returncode == 2 and "invalid choice" in result.stderr
    result = run(sys.executable, "-m", "fcenv", "train", "--no_such_flag", "1")  # the same parser
    assert result.returncode == 2 and "fcenv train: error: unrecognized arguments: --no_such_flag" in result.stderr
    result = run(sys.executable, "-m", "fcenv", "train", "--help")
    assert result.returncode == 0 and "--algorithm_name" in result.stdout
    with pytest.raises(SystemExit):
        parse_config(["--context_window", "16", "--max_new_tokens", "32"])


@pytest.mark.parametrize("flags, message", [
    (["--lr", "nan"], "--lr must be positive and finite, not nan"),
    (["--critic_lr=-1e-3"], "--critic_lr must be positive"),
    (["--clip_param", "inf"], "--clip_param must be positive and finite, not inf"),
    (["--kl_coef", "-0.1"], "--kl_coef must be 0 or more"),
    (["--max_grad_norm", "nan"], "--max_grad_norm must be 0 or more and finite"),
    (["--temperature", "inf"], "--temperature must be finite"),
    (["--temperature", "0"], "--temperature must be positive"),
    (["--lora_r", "0"], "--lora_r must be positive"),
    (["--critic_fraction", "0"], "--critic_fraction must be in (0, 1], not 0.0"),
    (["--critic_fraction", "nan"], "--critic_fraction must be in (0, 1], not nan"),
    (["--env_name", "CartPole-v1"], "--env_name must be a registered id of fcenv's FunctionCallingEnv"),
])
def test_flags_that_cannot_be_meant_are_refused_at_once(flags, message, capsys):
    with pytest.raises(SystemExit) as caught:
        parse_config(flags)
    assert caught.value.code == 2 and message in capsys.readouterr().err


def test_flag_errors_name_the_flag_and_leave_no_run_folder(tiny_model, tmp_path):
    """Checked before anything heavy: nothing is written for a run that cannot start."""
    for flags, message in ((["--lr", "nan"], "--lr must be positive and finite, not nan"),
                           (["--lora_target_modules", "q_proj", "qkv"],
                            "--lora_target_modules: the model has no module named ['qkv']")):
        result = run(sys.executable, str(SCRIPT), *tiny_flags(tiny_model, tmp_path), *flags)
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
        assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_cli_trains_and_writes_the_results_layout(tiny_model, tmp_path):
    result = run(sys.executable, str(SCRIPT), *tiny_flags(tiny_model, tmp_path), "--experiment_name", "cli")
    assert result.returncode == 0, result.stderr[-3000:]
    parent = tmp_path / "cli" / tiny_model.name / "tiny_train" / "TPPO"
    run_dir = parent / "run1"
    args = json.loads((run_dir / "args.json").read_text())
    assert args["experiment_name"] == "cli" and args["world_size"] == 1
    assert list((run_dir / "logs").glob("events.out.tfevents.*"))
    metrics = read_metrics(run_dir)
    assert [m["iteration"] for m in metrics] == [0, 1, 2]
    # Iteration 0 is the start: the held-out figures before any update, and a checkpoint.
    headline = ("heldout_greedy/accuracy", "heldout_greedy/reward", "heldout_sampled/accuracy",
                "heldout_sampled/reward")
    assert all(key in metrics[0] for key in headline) and metrics[0]["samples"] == 0
    for key in ("rollout/reward", "rollout/accuracy", "train/policy_loss", "train/value_loss", "train/kl_ref",
                "train/entropy", "train/clip_fraction", "train/explained_variance", "perf/samples_per_second",
                "perf/generated_tokens_per_second", "perf/memory_mb", *headline):
        assert key in metrics[-1], key
    assert any(k.startswith("rollout/facet_") for k in metrics[-1])
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == ["iter_000000", "iter_000001", "iter_000002"]
    assert "held-out accuracy (greedy) start -> end" in result.stdout
    assert "held-out accuracy (sampled) start -> end" in result.stdout
    resolved = args["resolved"]
    assert resolved["base_model"] == str(tiny_model.resolve()) and resolved["system_prompt"] == TINY_SYSTEM_PROMPT
    assert resolved["eval_indices"] == [0, 1, 2]

    # An independent client measures the run: the saved base through transformers' Auto
    # classes, the actor through PeftModel.from_pretrained, plain generate, env verdicts.
    client = run(sys.executable, "-m", "bench.heldout", str(run_dir), "--samples", "1",
                 "--out", str(tmp_path / "heldout.json"), "--answers", str(tmp_path / "answers.jsonl"))
    assert client.returncode == 0, client.stderr[-3000:]
    report = json.loads((tmp_path / "heldout.json").read_text())
    assert [r["checkpoint"] for r in report["reports"]] == ["iter_000000", "iter_000002"]
    assert all(0.0 <= r["greedy_accuracy"] <= 1.0 and r["tasks"] == 3 for r in report["reports"])
    # every answer is kept, and its verdicts are the report's
    answers = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert len(answers) == 2 * 2 * 3  # checkpoints x (greedy, sampled) x tasks
    for r in report["reports"]:
        greedy = [a["valid"] for a in answers if a["checkpoint"] == r["checkpoint"] and a["mode"] == "greedy"]
        assert sum(greedy) / 3 == r["greedy_accuracy"]
    # a second run of the same setup (through `fcenv train`, the same command) gets the next number
    result = run(sys.executable, "-m", "fcenv", "train", *tiny_flags(tiny_model, tmp_path), "--experiment_name", "cli",
                 "--num_env_steps", "2", "--eval_interval", "0")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (parent / "run2" / "args.json").exists()


def test_accelerate_launch_runs_the_cli(tiny_model, tmp_path):
    # accelerate 1.x starts a single process for `--cpu` (several need MPI); the command
    # must still run as is.
    accelerate = shutil.which("accelerate", path=str(Path(sys.executable).parent))
    if accelerate is None:
        pytest.skip("accelerate's launcher is not installed")
    result = run(accelerate, "launch", "--num_processes", "2", "--num_machines", "1", "--cpu",
                 "--mixed_precision", "no", "--dynamo_backend", "no", str(SCRIPT),
                 *tiny_flags(tiny_model, tmp_path), "--experiment_name", "acc", "--num_env_steps", "2",
                 "--eval_interval", "0")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "acc" / tiny_model.name / "tiny_train" / "TPPO" / "run1" / "checkpoints" / "iter_000001").is_dir()


@pytest.mark.slow
def test_two_cpu_processes_train_data_parallel(tiny_model, tmp_path):
    # On a machine without GPUs, accelerate's torchrun-based launcher (--multi_gpu) starts
    # the processes and the runner asks accelerate for a CPU process group (gloo).
    accelerate = shutil.which("accelerate", path=str(Path(sys.executable).parent))
    if accelerate is None:
        pytest.skip("accelerate's launcher is not installed")
    result = run(accelerate, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
                 "--mixed_precision", "no", "--dynamo_backend", "no", str(SCRIPT),
                 *tiny_flags(tiny_model, tmp_path), "--experiment_name", "ddp", "--num_env_steps", "8",
                 timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = tmp_path / "ddp" / tiny_model.name / "tiny_train" / "TPPO" / "run1"
    assert json.loads((run_dir / "args.json").read_text())["world_size"] == 2
    metrics = read_metrics(run_dir)
    # 8 actions over 2 processes x 2 envs: two iterations of 4 actions each
    assert [m["samples"] for m in metrics] == [0, 4, 8]  # 0: the held-out start
    checkpoint = run_dir / "checkpoints" / "iter_000002"
    assert (checkpoint / "rng_rank0.pt").exists() and (checkpoint / "rng_rank1.pt").exists()
    assert not list(run_dir.parent.glob("run2"))  # one run folder for both processes
