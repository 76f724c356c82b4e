"""BFCL v4's agentic episodes (memory, web search) through the trainer.

``fcenv train`` on a slice of BFCL's memory file and on a slice of its web-search file (with a
local corpus written from the answers' recorded sources) runs to its end, records rewards and
BFCL's agentic verdicts, and writes a checkpoint; a web-search dataset without ``--web_search``
is refused before anything heavy. The shaped reward pays a valid final answer 1.0 and a failing
one less; ARPO's branching restores a web-search or memory episode from the env's snapshot after
a tool result, and each branch is judged on its own answer. The slices come from BFCL's data in
~/.cache/fcenv/bfcl (``harness.agentic_slices``), never from the repository.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("peft")
from fcenv.algos.store.results import read_metrics
from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT
from fcenv.env import FunctionCallingEnv
from harness.agentic_slices import write_slices
from tests.support.runs import make_runner
from tests.support.scripted_engine import ScriptedEngine

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def slices(bfcl_dir, tmp_path_factory) -> dict[str, Path]:
    # Two notetaker questions (the shortest prerequisite chain: 5 conversations, 24 turns),
    # each in BFCL's three memory categories; two web-search questions, each in its two.
    return write_slices(bfcl_dir, tmp_path_factory.mktemp("agentic"), memory=2, web=2)


def train(tiny_model: Path, results: Path, *flags: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "fcenv", "train", "--model_name_or_path", str(tiny_model),
               "--system_prompt", TINY_SYSTEM_PROMPT, "--hide_function_docs", "--results_dir", str(results),
               "--n_rollout_threads", "2", "--num_env_steps", "1", "--max_new_tokens", "8", "--lora_r", "4",
               "--ppo_epoch", "1", "--max_steps_per_turn", "1", "--save_interval", "1", "--eval_interval", "1",
               "--eval_episodes", "1", "--eval_fraction", "0.25", "--no-progress", *flags]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)


def run_folder(results: Path) -> Path:
    (args,) = results.glob("*/*/*/*/run1/args.json")
    return args.parent


def check_run(run_dir: Path, least_actions: int) -> dict:
    metrics = read_metrics(run_dir)
    assert [m["iteration"] for m in metrics] == [0, 1]
    last = metrics[-1]
    # Two whole episodes (one per thread): every turn of every conversation took an action.
    assert last["samples"] >= 2 * least_actions
    # BFCL's agentic verdict judged each episode's final answer; the rewards are recorded.
    for key in ("rollout/reward", "rollout/episode_return", "rollout/accuracy", "rollout/facet_answered",
                "rollout/facet_answer_found", "train/policy_loss", "heldout_greedy/accuracy"):
        assert key in last, key
    assert 0.0 <= last["rollout/episode_return"] <= 1.0
    assert (run_dir / "checkpoints" / "iter_000001" / "actor" / "adapter_config.json").is_file()
    return last


def test_fcenv_train_plays_memory_entries_to_their_verdict(tiny_model, slices, tmp_path):
    result = train(tiny_model, tmp_path, "--dataset_path", str(slices["memory"]))
    assert result.returncode == 0, result.stderr[-3000:]
    task = FunctionCallingEnv(dataset_path=slices["memory"]).tasks[0]
    turns = sum(len(c["question"]) for c in task.prerequisites) + len(task.question)
    check_run(run_folder(tmp_path), least_actions=turns)


def test_fcenv_train_plays_web_search_entries_on_a_local_corpus(tiny_model, slices, tmp_path):
    result = train(tiny_model, tmp_path, "--dataset_path", str(slices["web_search"]),
                   "--web_search", str(slices["corpus"]))
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = run_folder(tmp_path)
    check_run(run_dir, least_actions=1)
    assert json.loads((run_dir / "args.json").read_text())["web_search"] == str(slices["corpus"])


def test_web_search_data_without_a_source_is_refused_before_training(tiny_model, slices, tmp_path):
    result = train(tiny_model, tmp_path, "--dataset_path", str(slices["web_search"]))
    assert result.returncode == 2
    assert "--dataset_path" in result.stderr and "4 web-search entries" in result.stderr
    assert "--eval_dataset_path" not in result.stderr  # its held-out share is the same file, named once
    assert "--web_search" in result.stderr and "Traceback" not in result.stderr
    result = train(tiny_model, tmp_path, "--dataset_path", str(slices["web_search"]),
                   "--web_search", str(tmp_path / "no-such-corpus"))
    assert result.returncode == 2 and "--web_search" in result.stderr and "no-such-corpus" in result.stderr
    assert not list(tmp_path.rglob("args.json"))  # no run folder left behind


def test_sft_coef_on_data_without_a_ground_truth_is_refused_before_the_run_folder(tiny_model, slices, tmp_path):
    """Agentic entries have no ground-truth answer to learn: --sft_coef would teach nothing."""
    result = train(tiny_model, tmp_path, "--dataset_path", str(slices["web_search"]),
                   "--web_search", str(slices["corpus"]), "--sft_coef", "1")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--sft_coef" in result.stderr and str(slices["web_search"]) in result.stderr
    assert not list(tmp_path.rglob("args.json"))


def test_process_rewards_samples_web_search_entries_on_the_source_training_uses(tiny_model, slices, tmp_path):
    command = [sys.executable, "-m", "fcenv", "process-rewards", "--model_name_or_path", str(tiny_model),
               "--system_prompt", TINY_SYSTEM_PROMPT, "--dataset_path", str(slices["web_search"]), "--tasks", "1",
               "--trajectories", "1", "--completions", "1", "--max_new_tokens", "8", "--n_rollout_threads", "2",
               "--no-progress", "--out", str(tmp_path / "lpr")]
    refused = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "4 web-search entries" in refused.stderr and "--web_search" in refused.stderr
    assert not (tmp_path / "lpr").exists()  # refused before anything was sampled
    done = subprocess.run([*command, "--web_search", str(slices["corpus"])], cwd=ROOT, capture_output=True,
                          text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = [json.loads(line) for line in (tmp_path / "lpr" / "trajectories.jsonl").read_text().splitlines()]
    assert row["id"].startswith("web_search_") and row["steps"]
    assert all(0.0 <= step["value"] <= 1.0 for step in row["steps"])


def test_the_shaped_reward_pays_a_valid_answer_more_than_a_wrong_one_and_that_more_than_none(slices):
    env = FunctionCallingEnv(dataset_path=slices["web_search"], web_search=slices["corpus"], reward="shaped")
    right = f"{{'answer': '{env.tasks[0].ground_truth[0]}', 'context': 'the corpus'}}"
    rewards = []
    for steps in ([right], ["{'answer': 'I do not know', 'context': 'I do not know'}"],
                  ["[search_engine_query(keywords='tea')]"] * 21):
        env.reset(options={"index": 0})
        rewards.append([env.step(step)[1] for step in steps][-1])
    assert rewards[0] == 1.0 and 0.0 < rewards[1] < 1.0 and rewards[2] == 0.0  # the last: BFCL's force quit


def branched(runner, texts: list[str]):
    """One group of two threads on task 0, branching whenever a thread is free, the model's
    part scripted (the env, its snapshots and the rollout loop are real)."""
    from fcenv.algos.rollout.branching import BranchingSettings, play_branching

    engine = ScriptedEngine(runner.loaded.tokenizer, runner.loaded.stop_ids[0], texts)
    return play_branching(runner.envs, engine, runner.codec, lambda group: 0, 2, max_new_tokens=200,
                          settings=BranchingSettings(beta=0.0, threshold=1.0))


GROUP = ("--algorithm_name", "GRPO", "--group_size", "2", "--n_rollout_threads", "2", "--branching", "entropy")


def test_branching_restores_a_web_search_episode_after_its_tool_result(tiny_model, slices, tmp_path):
    runner = make_runner(tiny_model, tmp_path, *GROUP, "--dataset_path", str(slices["web_search"]),
                         "--web_search", str(slices["corpus"]), "--reward", "shaped")
    answer = runner.envs[0].unwrapped.tasks[0].ground_truth[0]
    rollout = branched(runner, ["[search_engine_query(keywords='richest in China', max_results=1)]",
                                f"{{'answer': '{answer}', 'context': 'found'}}", "{'answer': 'no', 'context': 'x'}"])
    assert rollout.branches == 1 and len(rollout.episodes) == 2
    first, second = rollout.episodes
    assert first.action_indices[0] == second.action_indices[0]  # the search, shared
    search, right, wrong = rollout.actions
    assert search.info["calls"] == 1 and right.context == wrong.context  # both answered after its results
    assert "Zhong Shanshan" in runner.codec.tokenizer.decode(right.context)  # the corpus page it found
    assert right.reward == 1.0 and right.info["valid"] and 0.0 < wrong.reward < 1.0 and not wrong.info["valid"]


def test_branching_restores_a_memory_episode_mid_chain(tiny_model, slices, tmp_path):
    runner = make_runner(tiny_model, tmp_path, *GROUP, "--dataset_path", str(slices["memory"]))
    rollout = branched(runner, ["[core_memory_add(key='kid', value='daycare at 08:00 AM')]"])
    assert rollout.branches == 1 and len(rollout.episodes) == 2
    first, second = rollout.episodes
    assert first.action_indices[0] == second.action_indices[0]
    # Each branch played the rest of the chain and its question on its own.
    assert len(first.action_indices) == len(second.action_indices) > 20
    assert not set(first.action_indices[1:]) & set(second.action_indices[1:])
    turns = [rollout.actions[i].turn for i in second.action_indices]
    assert turns == sorted(turns) and turns[-1] > 20  # the turns counted over the conversations
