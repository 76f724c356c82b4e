"""The independent multi-turn client (bench/bfcl_flow.py): BFCL's own inference loop, backends and
evaluation runner in the oracle venv (the driver's ``fc_flow`` op), the model's answers rendered by
the tokenizer's chat template. It must see what ``fcenv generate`` sees and judge as ``fcenv
evaluate`` judges.

- Scripted answers (each turn's ground truth, and perturbed trajectories with broken calls, in the
  Hermes format), Qwen2.5-Coder's tokenizer: every query BFCL's loop makes is the prompt the env
  shows at that step, token for token, and the verdicts are the env's.
- A tiny model's greedy answers: ``python -m bench.bfcl_flow`` on a trained run's checkpoint gives,
  entry by entry, ``fcenv generate``'s answers and ``fcenv evaluate``'s verdicts.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from fcenv.bfcl_sample import write_mixed_sample
from fcenv.data import load_tasks
from fcenv.env import FunctionCallingEnv
from harness.generators_fc import fc_turns
from harness.oracle import OracleSession
from harness.template_prompts import query_ids
from harness.trajectories import ground_truth_steps, perturbed_trajectories

pytestmark = pytest.mark.oracle

ROOT = Path(__file__).resolve().parents[2]
CATEGORIES = ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"]


def raw_entries(bfcl_dir: Path, category: str) -> dict[str, dict]:
    lines = (bfcl_dir / f"BFCL_v4_{category}.json").read_text().splitlines()
    return {entry["id"]: entry for entry in map(json.loads, lines[:2])}


def scripted_cases(bfcl_dir: Path) -> list[tuple]:
    """Per category: its first entry's ground truth and a perturbed trajectory of its second
    (faults in the format included), as (task, raw entry, step texts per turn)."""
    rng = random.Random("bfcl-flow")
    cases = []
    for category in CATEGORIES:
        first, second = load_tasks(bfcl_dir / f"BFCL_v4_{category}.json")[:2]
        raw = raw_entries(bfcl_dir, category)
        cases.append((first, raw[first.id], fc_turns("hermes", ground_truth_steps(first), rng, fault_rate=0.0)))
        [(_, steps)] = perturbed_trajectories(second, rng, 1)
        cases.append((second, raw[second.id], fc_turns("hermes", steps, rng, fault_rate=0.3)))
    return cases


def position(messages: list[dict]) -> tuple[int, int]:
    """(turn, step) of the query a chat stands for: every turn opens with one user message."""
    users = [i for i, message in enumerate(messages) if message["role"] == "user"]
    return len(users) - 1, sum(message["role"] == "assistant" for message in messages[users[-1]:])


def env_prompts(task, turns: list[list[str]], tokenizer) -> tuple[dict, tuple[bool, str | None]]:
    """The env's prompt tokens at each (turn, step) of the trajectory, and its verdict."""
    env = FunctionCallingEnv(tasks=[task], tool_format="hermes", renderer=tokenizer)
    observation, info = env.reset(seed=0)
    prompts, turn, step = {}, 0, 0
    while True:
        prompts[(turn, step)] = tokenizer(observation, add_special_tokens=False).input_ids
        observation, _, terminated, truncated, info = env.step(turns[turn][step])
        if terminated or truncated:
            return prompts, (info["valid"], info["error_type"])
        turn, step = (turn + 1, 0) if "turn_valid" in info else (turn, step + 1)


def test_the_flow_asks_the_prompts_the_env_shows_and_judges_as_the_env(qwen_coder, bfcl_dir, oracle):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(qwen_coder)
    cases = scripted_cases(bfcl_dir)
    scripts = {task.id: turns for task, _, turns in cases}
    asked: dict[str, dict] = {task.id: {} for task, _, _ in cases}

    def answer(queries: list[dict]) -> list[dict]:
        texts = []
        for query in queries:
            turn, step = position(query["messages"])
            asked[query["id"]][(turn, step)] = query_ids(tokenizer, query)
            texts.append({"text": scripts[query["id"]][turn][step]})
        return texts

    with OracleSession(oracle.python) as session:
        verdicts = session.play_fc([raw for _, raw, _ in cases], [task.ground_truth for task, _, _ in cases], answer)
    for (task, _, turns), verdict in zip(cases, verdicts):
        prompts, env_verdict = env_prompts(task, turns, tokenizer)
        assert asked[task.id].keys() == prompts.keys(), task.id
        for key, ids in prompts.items():
            assert asked[task.id][key] == ids, (task.id, key)
        assert (verdict["valid"], verdict["error_type"]) == env_verdict, task.id
        if isinstance(verdict["result"], list):  # else BFCL's inference error, recorded as its message
            assert [turn["steps"] for turn in verdict["turns"]] == [len(steps) for steps in verdict["result"]]
    # The ground truth passes, and calls ran: turns of several steps, tool results in later prompts.
    assert all(v["valid"] for v in verdicts[::2])
    assert sum(turn["steps"] > 1 for v in verdicts for turn in v["turns"]) >= 10


# ---- a tiny model's answers: bench/bfcl_flow.py against fcenv generate + fcenv evaluate ----

def run(*args: str) -> subprocess.CompletedProcess:
    # A few CPU-minutes in all; the timeout is for a loaded machine (vLLM's start alone is a CPU-minute).
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def fc_run(vllm_ready, tmp_path_factory) -> Path:
    """A short FC training run of a tiny Hermes build whose tokenizer carries its template (so
    apply_chat_template(tools=...) is the run's rendering), with heads of 32 (vLLM's CPU
    attention) and room for BFCL's multi-turn prompts."""
    import torch

    from fcenv.algos.config import parse_config
    from fcenv.algos.tiny.build import MULTI_TURN_TRAIN, TinySpec, build_tiny
    from fcenv.algos.training.loop import Runner

    torch.set_num_threads(1)
    spec = TinySpec(hidden_size=64, intermediate_size=128, num_layers=2, num_heads=2, num_kv_heads=1, max_positions=4096,
                    pretrain_steps=20, pretrain_batch=4, demonstrations=2, compact_tools=True, template_tokens=True,
                    tool_format="hermes")
    model = build_tiny(tmp_path_factory.getbasetemp() / "tiny-cache", spec, dataset_path=MULTI_TURN_TRAIN,
                       log=lambda message: None, progress=False)
    flags = ["--model_name_or_path", str(model), "--dataset_path", str(MULTI_TURN_TRAIN), "--tool_format", "hermes",
             "--results_dir", str(tmp_path_factory.mktemp("flow-run")), "--n_rollout_threads", "4",
             "--num_env_steps", "4", "--max_new_tokens", "16", "--ppo_epoch", "1", "--num_mini_batch", "1",
             "--lora_r", "4", "--lr", "1e-2", "--eval_interval", "0", "--save_interval", "1", "--no-progress",
             "--rollout_engine", "hf", "--seed", "3"]
    return Runner(parse_config(flags), log=lambda message: None).run()


@pytest.mark.slow
def test_the_flow_client_agrees_with_generate_and_evaluate_entry_by_entry(fc_run, bfcl_dir, oracle, tmp_path):
    data = write_mixed_sample(bfcl_dir, ("multi_turn_base", "multi_turn_miss_func"), 2, tmp_path / "data" / "mt.json")
    checkpoint = sorted((fc_run / "checkpoints").iterdir())[-1].name
    run("-m", "fcenv", "generate", "--run", str(fc_run), "--checkpoint", checkpoint, "--greedy",
        "--max_new_tokens", "32", "--dataset_path", str(data), "--out", str(tmp_path / "answers"), "--no-progress")
    answers = tmp_path / "answers" / "mt_result.json"
    run("-m", "fcenv", "evaluate", "--tool_format", "hermes", "--dataset_path", str(data), "--results", str(answers),
        "--out", str(tmp_path / "verdicts.jsonl"))
    report_file = tmp_path / "report.json"
    done = run("-m", "bench.bfcl_flow", str(fc_run), "--checkpoint", checkpoint, "--dataset_path", str(data),
               "--max_new_tokens", "32", "--oracle_python", str(oracle.python), "--out", str(report_file),
               "--agree_with", str(tmp_path / "verdicts.jsonl"))
    report = json.loads(report_file.read_text())
    assert report["checkpoint"] == checkpoint and report["entries"] == 4
    assert report["agreement"]["same_valid"] == report["agreement"]["same_error_type"] == 4, report["agreement"]
    assert "4 of 4 entries get the same verdict" in done.stdout
    generated = {line["id"]: line["result"] for line in map(json.loads, answers.read_text().splitlines())}
    for verdict in report["verdicts"]:
        assert verdict["result"] == generated[verdict["id"]], verdict["id"]  # the same answers, step by step
    assert report["turns"] == sum(len(turns) for turns in generated.values())
