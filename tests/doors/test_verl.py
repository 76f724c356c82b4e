"""fcenv.verl inside verl: the recipe composed with verl's defaults, the agent loop run on real
fcenv episodes as verl's worker runs it, and the tool's create/execute/calc_reward/release. verl
pins an older transformers, so all of it runs in .verl-venv (`make verl`), from
tests/support/verl_driver.py in a subprocess, as the parity tests run BFCL's checker in its venv."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_fcenv_verl_in_verls_venv(verl_python, tiny_model, bfcl_dir):
    """One run of the driver (verl's imports alone take a while), every check on its report."""
    result = subprocess.run([str(verl_python), str(ROOT / "tests" / "support" / "verl_driver.py"), "--model", str(tiny_model),
                             "--bfcl-dir", str(bfcl_dir)], cwd=ROOT, capture_output=True, text=True, timeout=1500)
    assert result.returncode == 0, result.stderr[-4000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    check_the_recipe_composes_with_verls_defaults_into_grpo_on_the_fcenv_agent_loop(report)
    check_the_agent_loop_plays_whole_episodes_and_trains_on_the_tokens_sampled(report)
    check_the_agent_loop_scores_the_episode_with_the_envs_reward(report)
    for label in ("tiny", "tiny_fc"):
        check_the_tool_runs_a_tasks_calls_and_its_reward_is_the_episodes(report, label)
    check_the_tool_on_bfcl_ends_an_unfinished_episode_with_a_verdict(report)


def check_the_recipe_composes_with_verls_defaults_into_grpo_on_the_fcenv_agent_loop(report):
    assert report["recipe"] == {"adv_estimator": "grpo", "default_agent_loop": "fcenv_agent", "multi_turn": True}
    rows = report["agent_loop"]["rows"]
    assert all(row["agent_name"] == "fcenv_agent" and row["extra_info"]["task_id"] for row in rows)


def check_the_agent_loop_plays_whole_episodes_and_trains_on_the_tokens_sampled(report):
    """Two-turn tasks sampled by a model: the env's tokens (tool results, the second request)
    are masked, and the log-probs returned are the model's own on the sequence verl trains on."""
    for episode in report["agent_loop"]["sampled"]:
        assert 0 in episode["mask"] and 1 in episode["mask"] and episode["response_length"] == len(episode["mask"])
        assert episode["logprob_gap"] < 1e-3
        assert "<|user|>" in episode["env_text"]  # the second turn's request came from the env
        assert 0.0 <= episode["reward"] < 1.0 or episode["extra"]["fcenv_valid"] == 1.0


def check_the_agent_loop_scores_the_episode_with_the_envs_reward(report):
    truth, wrong = report["agent_loop"]["replayed"]
    assert not truth["wrong"] and truth["reward"] == 1.0 and truth["valid"] == 1.0
    assert truth["mask_ones"] == truth["answer_tokens"]  # every answer token is the model's, nothing else
    assert wrong["wrong"] and wrong["reward"] < 1.0 and wrong["valid"] == 0.0


def check_the_tool_runs_a_tasks_calls_and_its_reward_is_the_episodes(report, label):
    tool = report["tool"][label]
    assert tool["tools"] == tool["functions"]  # one verl tool per function, loaded by verl's own loader
    truth, wrong = tool["truth"], tool["wrong"]
    assert all(r and "error" not in r.lower() for r in truth["responses"])
    assert truth["reward"] == 1.0 and wrong["reward"] < 1.0


def check_the_tool_on_bfcl_ends_an_unfinished_episode_with_a_verdict(report):
    tool = report["tool"]["bfcl"]
    truth, wrong = tool["truth"], tool["wrong"]
    assert truth["turns"] > 1 and truth["responses"] and all(truth["responses"])
    assert 0.0 < truth["reward"] < 1.0  # the first turn earned its share, the unanswered ones nothing
    assert wrong["reward"] < truth["reward"]


def test_the_tool_runs_exactly_the_call_the_model_made_or_none(verl_python):
    """Argument names and values with call syntax in them (a model writes any JSON key) never
    make another call run: refused with an error that says why, or run as the one call."""
    result = subprocess.run([str(verl_python), str(ROOT / "tests" / "support" / "verl_injection_driver.py")], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    for case in ("prompting: argument name", "prompting: value as a nested call"):
        outcome = report[case]
        assert outcome["tool_messages"] == [] and "42" not in outcome["response"], case  # multiply(a=7, b=6) ran
        assert "the call was not run" in json.loads(outcome["response"])["error"] and outcome["metrics"] == {"refused": 1.0}
    assert "argument name 'b=30), multiply(a=7, b' of 'add' is not an identifier" in report["prompting: argument name"]["response"]
    for mode in ("prompting", "hermes"):
        assert [m["content"] for m in report[f"{mode}: plain call"]["tool_messages"]] == ['{"result": 32}']
    for case in ("hermes: argument name", "hermes: value as a nested call"):  # JSON: one call, which fails
        messages = report[case]["tool_messages"]
        assert [m["name"] for m in messages] == ["add"] and "42" not in report[case]["response"], case
