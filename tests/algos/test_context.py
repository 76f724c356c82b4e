"""Long chats keep their system prompt: cut from the middle, counted, or refused clearly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("peft")
from fcenv.algos.model.loading import load_tokenizer
from fcenv.algos.rollout.codec import ContextTooLong, TextCodec
from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT, chat_renderer
from tests.support.scripted_engine import ScriptedEngine

ROOT = Path(__file__).resolve().parents[2]


def chat(turns: int) -> list[dict]:
    messages = [{"role": "system", "content": "SYSTEM: call functions like [f(x=1)]. " * 3}]
    for k in range(turns):
        messages += [{"role": "user", "content": f"Question number {k}: add {k} and {k + 1}."},
                     {"role": "assistant", "content": f"[add(a={k}, b={k + 1})]"},
                     {"role": "tool", "content": f'{{"result": {2 * k + 1}}}'}]
    return messages


def test_a_long_chat_is_cut_from_the_middle_keeping_the_system_prompt(tiny_model):
    tokenizer = load_tokenizer(tiny_model)
    render = chat_renderer(tokenizer)
    messages = chat(30)
    whole = TextCodec(tokenizer, 100_000, render).tokens(render(messages))
    codec = TextCodec(tokenizer, len(whole) // 3, render)
    tokens, cut = codec.encode_counted(render(messages), messages, "x")
    assert cut and len(tokens) <= len(whole) // 3
    text = tokenizer.decode(tokens)
    assert text.startswith("<|system|>SYSTEM: call functions")  # the system prompt, whole
    assert "Question number 29" in text and text.endswith("<|assistant|>")  # the latest messages
    assert "Question number 0:" not in text  # the oldest went
    # the fewest messages dropped: one more would not fit
    assert codec.encode_counted(render(messages[:1] + messages[2:]), messages[:1] + messages[2:], "x")[1]
    short = chat(1)
    assert codec.encode_counted(render(short), short, "x") == (codec.tokens(render(short)), False)


def test_a_chat_whose_system_prompt_cannot_fit_is_refused_with_counts(tiny_model):
    tokenizer = load_tokenizer(tiny_model)
    render = chat_renderer(tokenizer)
    messages = [{"role": "system", "content": "docs " * 400}, {"role": "user", "content": "hi"}]
    with pytest.raises(ContextTooLong, match=r"entry multi_turn_base_7: .*window of 64 tokens.*system prompt alone is \d+"):
        TextCodec(tokenizer, 64, render).encode_counted(render(messages), messages, "multi_turn_base_7")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "train_fctncalling.py"), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_training_refuses_what_cannot_fit_or_would_hide_the_docs(tiny_model, tmp_path, bfcl_dir):
    common = ["--model_name_or_path", str(tiny_model), "--results_dir", str(tmp_path), "--no-progress",
              "--n_rollout_threads", "2", "--num_env_steps", "2"]
    # BFCL's prompt carries every function doc: far beyond a small window, for every entry.
    result = run(*common, "--dataset_path", str(bfcl_dir / "BFCL_v4_multi_turn_base.json"), "--context_window", "512")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "entry multi_turn_base_0 of" in result.stderr and "system prompt alone is" in result.stderr
    # A prompt without {functions} on data with functions hides the docs: refused unless asked for.
    result = run(*common, "--system_prompt", TINY_SYSTEM_PROMPT)
    assert result.returncode == 2 and "--hide_function_docs" in result.stderr and "Traceback" not in result.stderr
    assert not list(tmp_path.rglob("args.json"))  # refused before any run folder was made


def test_token_ids_stay_ids_from_one_step_to_the_next(tiny_model):
    """A multi-turn step's context is the previous context, the previous action's ids as sampled
    and the tokens of what the env added (tool results, the next prompt): decoding the action and
    encoding it again could give the model ids it never produced. Its text is the env's chat."""
    import gymnasium as gym
    import torch

    from fcenv.algos.model.loading import load_model
    from fcenv.algos.model.policy import LoraSettings, Policy
    from fcenv.algos.rollout.hf import HFEngine
    from fcenv.algos.rollout.play import play

    loaded = load_model(str(tiny_model), torch.device("cpu"))
    policy = Policy(loaded.base, pad_id=loaded.pad_id, stop_ids=loaded.stop_ids, actor_lora=LoraSettings())
    envs = [gym.make("fcenv/FunctionCalling-v0", dataset_path="multi_turn_train", renderer=loaded.renderer,
                     system_prompt=loaded.system_prompt) for _ in range(4)]
    codec = TextCodec(loaded.tokenizer, 4096, render=envs[0].unwrapped.renderer)
    # Multi-turn tasks whose first answer holds a call, so the episode goes on after it.
    teacher = "[get_user_id(user='Bob')]"
    tasks = iter(range(40))
    rollout = play(envs, HFEngine(policy), codec, lambda thread: next(tasks, None), max_new_tokens=24,
                   generator=torch.Generator().manual_seed(0))
    followed = 0
    for episode in rollout.episodes:
        steps = [rollout.actions[i] for i in episode.action_indices]
        for before, after in zip(steps, steps[1:]):
            kept = before.context + before.action
            assert after.context[:len(kept)] == kept
            followed += 1
    assert followed > 0, "no episode took a second step"

    # The context built step by step is the env's chat as text.
    env = envs[0]
    observation, info = env.reset(options={"index": 0})
    context, cut = codec.encode_counted(observation, None)
    action = codec.tokens(teacher) + [loaded.stop_ids[0]]
    following, *_ = env.step(codec.decode(action))
    tokens, cut = codec.follow(context, cut, action, observation, following)
    assert not cut and tokens[:len(context) + len(action)] == context + action
    assert loaded.tokenizer.decode(tokens, skip_special_tokens=False) == following


def test_a_chat_that_shows_the_action_otherwise_is_encoded_whole(tiny_model):
    """Without the chat's messages and renderer to find what follows the action, a chat that
    does not show the action as written is encoded whole (FC mode with a real template keeps
    the ids: tests/real_models/test_templates.py)."""
    tokenizer = load_tokenizer(tiny_model)
    codec = TextCodec(tokenizer, 4096)
    observation = "<|user|>Add 2 and 3.<|end|><|assistant|>"
    action = codec.tokens("[add(a=2, b=3)]<|end|>")
    rewritten = observation + '{"name": "add"}<|end|>' + "<|tool|>5<|end|><|assistant|>"
    assert codec.follow(codec.tokens(observation), False, action, observation, rewritten) == (codec.tokens(rewritten), False)
    # a cut context is never continued: its tokens are not the observation's
    echoed = observation + tokenizer.decode(action, skip_special_tokens=False) + "<|tool|>5<|end|><|assistant|>"
    assert codec.follow([1, 2], True, action, observation, echoed) == (codec.tokens(echoed), False)


def test_a_chat_that_outgrows_the_window_mid_episode_fails_the_episode_and_is_counted(tiny_model):
    """A tool result that alone outgrows the window (an error that repeats a long argument):
    the episode ends there with a failing verdict (its rewards so far kept), and training logs
    the share of such episodes as rollout/context_overflow_rate, apart from
    rollout/context_cut_rate (chats cut from the middle that went on)."""
    import gymnasium as gym
    import torch

    from fcenv.algos.model.loading import load_model
    from fcenv.algos.rollout.codec import CONTEXT_OVERFLOW
    from fcenv.algos.rollout.play import play
    from fcenv.algos.training.metrics import means, rollout_stats

    loaded = load_model(str(tiny_model), torch.device("cpu"))
    env = gym.make("fcenv/FunctionCalling-v0", dataset_path="multi_turn_train", renderer=loaded.renderer,
                   system_prompt=loaded.system_prompt)
    index = next(i for i, t in enumerate(env.unwrapped.tasks) if "get_user_id" in {f["name"] for f in t.functions})
    observation, _ = env.reset(options={"index": index})
    codec = TextCodec(loaded.tokenizer, 0, render=env.unwrapped.renderer, stop_ids=loaded.stop_ids)
    codec.context_limit = len(codec.tokens(observation)) + 60  # the first context fits, the long error does not
    long_name = "Zed " * 80
    engine = ScriptedEngine(loaded.tokenizer, loaded.stop_ids[0], [f"[get_user_id(user='{long_name}')]"])
    tasks = iter([index])
    rollout = play([env], engine, codec, lambda thread: next(tasks, None), max_new_tokens=600)
    (episode,) = rollout.episodes
    assert episode.terminated and episode.bootstrap_context is None and len(episode.action_indices) == 1
    last = rollout.actions[-1]
    assert last.info["calls"] == 1  # the call ran; its result did not fit
    assert last.info["valid"] is False and last.info["error_type"] == CONTEXT_OVERFLOW
    figures = means(rollout_stats(rollout, "rollout"))
    assert figures["rollout/context_overflow_rate"] == 1.0 and figures["rollout/accuracy"] == 0.0
    assert figures["rollout/context_cut_rate"] == 0.0  # the first context was whole


def test_generate_names_the_entry_whose_chat_cannot_fit_and_goes_on(tiny_model, tmp_path):
    """fcenv generate records an entry whose chat outgrows the window as BFCL's failed inference,
    naming the entry's id, and answers the others."""
    import json

    data = ROOT / "fcenv" / "bundled" / "multi_turn_eval.json"
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "fcenv", "generate", "--model", str(tiny_model), "--data",
                             str(data), "--out", str(out), "--context_window", "300", "--max_new_tokens", "8",
                             "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in (out / "multi_turn_eval_result.json").read_text().splitlines()]
    assert len(lines) == 150
    for line in lines:
        assert line["result"].startswith(f"Error during inference: context_overflow: entry {line['id']}: "
                                         "the context does not fit the window of 292 tokens"), line
    assert "entry ?" not in result.stderr and "150 of 150 answers" in result.stderr
