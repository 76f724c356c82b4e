"""An episode that outgrows the context window ends with a defined verdict, never a crash: in
training (the episode fails with ``context_overflow``, its rewards so far kept) and in ``fcenv
generate`` (the entry's answer is BFCL's failed inference; the run goes on)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym

from fcenv.algos.model.loading import load_tokenizer
from fcenv.algos.rollout.codec import CONTEXT_OVERFLOW, TextCodec, chat_of
from fcenv.algos.rollout.play import take_action
from fcenv.algos.rollout.records import EpisodeRecord
from fcenv.bfcl_sample import write_sample
from fcenv.tool_formats import write_hermes
from fcenv.handlers import Call

ROOT = Path(__file__).resolve().parents[2]


def test_a_tool_result_too_long_for_the_window_ends_the_episode_as_a_failure(qwen_coder, bfcl_dir):
    """The model writes a long file, then reads it back: the result alone outgrows the window."""
    tokenizer = load_tokenizer(qwen_coder)
    env = gym.make("fcenv/FunctionCalling-v0", dataset_path=str(bfcl_dir / "BFCL_v4_multi_turn_base.json"),
                   renderer=tokenizer, tool_format="hermes")
    observation, info = env.reset(options={"index": 0})
    stop = tokenizer.eos_token_id
    codec = TextCodec(tokenizer, 0, render=env.unwrapped.renderer, stop_ids=[stop])
    codec.context_limit = len(codec.tokens(observation)) + 400
    context, cut = codec.encode_counted(observation, chat_of(info))
    long_text = " ".join(f"line {i} of the budget analysis." for i in range(300))  # ~2,400 tokens
    script = [[Call("cd", {"folder": "document"}), Call("touch", {"file_name": "long.txt"}),
               Call("echo", {"content": long_text, "file_name": "long.txt"})],
              [Call("cat", {"file_name": "long.txt"})]]
    episode, actions = EpisodeRecord(0, info["id"]), []
    for calls in script:
        action = tokenizer(write_hermes(calls), add_special_tokens=False).input_ids + [stop]
        step = take_action(env, 0, episode, actions, [stop], codec, observation, context, cut, action,
                           [0.0] * len(action))
        if step.done:
            break
        observation, (context, cut) = step.observation, step.context
        assert cut  # the long call itself is cut away from the middle; the chat goes on
    assert step.done and episode.terminated and episode.bootstrap_context is None
    assert len(actions) == 2 and actions[-1].info["calls"] == 1  # the read ran; its result did not fit
    assert actions[-1].info["valid"] is False and actions[-1].info["error_type"] == CONTEXT_OVERFLOW


def test_generate_records_an_entry_that_cannot_fit_as_a_failed_inference(smollm2, bfcl_dir, tmp_path):
    data = write_sample(bfcl_dir, "multi_turn_base", 2, tmp_path / "data")
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "fcenv", "generate", "--model", str(smollm2), "--data", str(data),
                             "--out", str(out), "--greedy", "--context_window", "700", "--max_new_tokens", "8",
                             "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    assert "2 of 2 answers" in result.stderr and "context_overflow" in result.stderr
    lines = [json.loads(line) for line in (out / f"{data.stem}_result.json").read_text().splitlines()]
    assert [line["result"].split(":")[:2] for line in lines] == [["Error during inference", " context_overflow"]] * 2
    verdicts = tmp_path / "verdicts.jsonl"
    scored = subprocess.run([sys.executable, "-m", "fcenv", "evaluate", "--data", str(data), "--results",
                             str(out / f"{data.stem}_result.json"), "--out", str(verdicts)], cwd=ROOT,
                            capture_output=True, text=True, timeout=300, check=False)
    assert scored.returncode == 0, scored.stderr
    assert [json.loads(line)["valid"] for line in verdicts.read_text().splitlines()] == [False, False]
