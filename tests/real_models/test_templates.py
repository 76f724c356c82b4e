"""Real tokenizers' own chat templates, token for token: the first context is the template's
rendering of BFCL's entry (with the tools BFCL's FC handlers pass), and every later context of a
multi-turn episode is the earlier context, the action's ids as sampled and the template's own
tokens for what followed (the message's end, tool results, the next user turn, the prompt).

Real tokenizers: Qwen2.5's (from Qwen2.5-Coder-0.5B-Instruct), Qwen3's (tools and <think>) and
Llama 3.1's (a template without tools: prompting mode, and FC mode in fcenv's llama_json
template). The actions are scripted texts (the entry's ground-truth calls in the family's
format, as compact JSON where the template writes calls with spaces, then a closing answer) tokenised by the real tokenizer, so every step runs real calls
on BFCL's backends; the env, the codec and the templates are the real ones.
"""

from __future__ import annotations

import itertools
import json

import gymnasium as gym
import pytest

from fcenv.algos.model.loading import load_tokenizer
from fcenv.algos.rollout.codec import TextCodec, chat_of
from fcenv.algos.rollout.play import take_action
from fcenv.algos.rollout.records import EpisodeRecord
from fcenv.data import load_tasks
from fcenv.multi_turn.executor import parse_call_text
from fcenv.prompts import hinted_functions
from fcenv.tool_formats import get_tool_format
from fcenv.handlers import Call

THOUGHT = "<think>\nThe user wants this done; I call the tools.\n</think>\n\n"


def tokenizer_at(request, fixture: str):
    folder = request.getfixturevalue(fixture)
    return load_tokenizer(folder)


def make_env(data, tokenizer, tool_format: str | None):
    mode = {"tool_format": tool_format} if tool_format else {}
    return gym.make("fcenv/FunctionCalling-v0", dataset_path=str(data), renderer=tokenizer, order="sequential",
                    **mode)


def script(task, tool_format: str | None, think: bool) -> list[str]:
    """Per turn: the ground truth's calls in one step (if any), then a step without calls."""
    steps = []
    for turn in task.ground_truth:
        calls = [Call(name, kwargs) for name, _, kwargs in map(parse_call_text, turn)]
        if calls:
            text = get_tool_format(tool_format).write(calls) if tool_format else "[" + ", ".join(turn) + "]"
            if tool_format == "hermes":  # compact JSON, which the template writes otherwise
                text = "\n".join(f'<tool_call>\n{json.dumps({"name": c.name, "arguments": c.arguments}, separators=(",", ":"))}'
                                 f'\n</tool_call>' for c in calls)
            steps.append((THOUGHT if think else "") + text)
        steps.append("Done.")
    return steps


def played(env, tokenizer, index: int, texts: list[str], stop_id: int):
    """The episode's steps, each as (action record, the env's messages and tools after it)."""
    codec = TextCodec(tokenizer, 200_000, render=env.unwrapped.renderer, stop_ids=[stop_id])
    observation, info = env.reset(options={"index": index})
    context, cut = codec.encode_counted(observation, chat_of(info))
    first = (context, info)
    episode, actions, steps = EpisodeRecord(index, info["id"]), [], []
    for text in texts:
        action = tokenizer(text, add_special_tokens=False).input_ids + [stop_id]
        step = take_action(env, 0, episode, actions, [stop_id], codec, observation, context, cut, action,
                           [0.0] * len(action))
        steps.append((actions[-1], step.info))
        if step.done:
            break
        observation, (context, cut) = step.observation, step.context
        assert not cut
    return first, steps


CASES = [  # tokenizer fixture, tool format (None: prompting), thinking
    ("qwen_coder", "hermes", False),
    ("qwen3_tokenizer", "hermes", True),
    ("qwen3_tokenizer", "hermes", False),
    ("llama31_tokenizer", None, False),
    ("llama31_tokenizer", "llama_json", False),
]


@pytest.mark.parametrize("fixture,tool_format,think", CASES)
def test_every_context_is_the_previous_one_the_sampled_ids_and_the_templates_tokens(request, bfcl_dir, fixture,
                                                                                   tool_format, think):
    tokenizer = tokenizer_at(request, fixture)
    data = bfcl_dir / "BFCL_v4_multi_turn_base.json"
    env = make_env(data, tokenizer, tool_format)
    template = env.unwrapped.renderer.template if hasattr(env.unwrapped.renderer, "template") else None
    stop_id = tokenizer.eos_token_id
    stop_text = tokenizer.decode([stop_id])
    tasks = load_tasks(data)
    followed = results_seen = 0
    for index in (0, 1, 7):
        task = tasks[index]
        (context, info), steps = played(env, tokenizer, index, script(task, tool_format, think), stop_id)
        tools = info.get("tools")
        # The first context: the template's rendering of the entry, tools as BFCL's FC handler passes them.
        first = tokenizer.apply_chat_template(info["messages"], tools=tools, chat_template=template, tokenize=False,
                                              add_generation_prompt=True)
        assert context == tokenizer(first, add_special_tokens=False).input_ids
        if tool_format:
            assert tools == hinted_functions(task.functions, task.language)
        bare = tokenizer.apply_chat_template(info["messages"], tools=tools, chat_template=template, tokenize=False,
                                             add_generation_prompt=False)
        answer_prompt = first[len(bare):]
        for (before, info_after), (after, _) in itertools.pairwise(steps):
            kept = before.context + before.action
            assert after.context[:len(kept)] == kept, "the sampled ids are not the next context's"
            tail_ids = after.context[len(kept):]
            tail = tokenizer.decode(tail_ids, skip_special_tokens=False)
            assert tail_ids == tokenizer(tail, add_special_tokens=False).input_ids  # the template's text, tokenised
            # The tail is what the template writes after the action's message, as it renders the chat.
            whole = tokenizer.apply_chat_template(info_after["messages"], tools=info_after.get("tools"),
                                                  chat_template=template, tokenize=False, add_generation_prompt=True)
            assert whole.endswith(tail) and whole[:len(whole) - len(tail)].endswith(stop_text)
            assert answer_prompt and tail.endswith(answer_prompt)
            for message in info_after["messages"][_last_assistant(info_after["messages"]) + 1:]:
                assert message["content"].strip() in tail  # tool results and the next query, as the env wrote them
                results_seen += message["role"] == "tool"
            followed += 1
    assert followed >= 6 and results_seen >= 3


def _last_assistant(messages) -> int:
    return max(i for i, m in enumerate(messages) if m["role"] == "assistant")


def test_qwen3_keeps_the_sampled_thinking_which_its_template_drops_from_earlier_turns(request, bfcl_dir):
    """The chosen behaviour: an episode is one token sequence, so the reasoning the model wrote
    in an earlier turn stays in its context (as sampled); Qwen3's template, which ``fcenv
    generate`` and BFCL render with, drops it once a new user turn begins."""
    tokenizer = tokenizer_at(request, "qwen3_tokenizer")
    data = bfcl_dir / "BFCL_v4_multi_turn_base.json"
    env = make_env(data, tokenizer, "hermes")
    task = load_tasks(data)[0]
    _, steps = played(env, tokenizer, 0, script(task, "hermes", think=True), tokenizer.eos_token_id)
    thought = THOUGHT.split("\n")[1]
    later = next(i for i, (record, _) in enumerate(steps) if record.turn == 1)
    context = tokenizer.decode(steps[later][0].context, skip_special_tokens=False)
    assert thought in context  # turn 0's reasoning, as sampled
    chat = steps[later - 1][1]  # the chat that action answered, as the template renders it
    rendered = tokenizer.apply_chat_template(chat["messages"], tools=chat["tools"], tokenize=False,
                                             add_generation_prompt=True)
    assert thought not in rendered  # the template's view: earlier turns' reasoning dropped
    # Within a turn the template shows it: the message keeps it as reasoning_content, as BFCL does.
    calls_step = next(info for record, info in steps if record.info["calls"])
    assert calls_step["messages"][_last_assistant(calls_step["messages"])]["reasoning_content"] == thought
    within = tokenizer.apply_chat_template(calls_step["messages"], tools=calls_step["tools"], tokenize=False,
                                           add_generation_prompt=True)
    assert thought in within


def qwen3_shaped_model(tokenizer_folder, into):
    """A randomly initialised model in Qwen3's shape (tiny) with the real Qwen3 tokenizer."""
    import shutil

    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    tokenizer = load_tokenizer(tokenizer_folder)
    torch.manual_seed(0)
    config = Qwen3Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=32768,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    Qwen3ForCausalLM(config).save_pretrained(into)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tokenizer_folder / name, into / name)
    return into


def test_a_model_in_qwen3s_shape_samples_multi_turn_episodes_as_one_token_sequence(qwen3_tokenizer, bfcl_dir,
                                                                                     tmp_path):
    """The trainer's own rollout (the hf engine sampling from a real model's weights, in Qwen3's
    template, FC mode): every later action's context extends the earlier one by its sampled ids;
    and the trainer trains on it."""
    import torch

    from fcenv.algos.config import parse_config
    from fcenv.algos.model.loading import load_model
    from fcenv.algos.model.policy import LoraSettings, Policy
    from fcenv.algos.rollout.hf import HFEngine
    from fcenv.algos.rollout.play import play
    from fcenv.algos.training.loop import Runner
    from fcenv.bfcl_sample import write_sample

    folder = qwen3_shaped_model(qwen3_tokenizer, tmp_path / "model")
    data = write_sample(bfcl_dir, "multi_turn_base", 3, tmp_path / "data")
    loaded = load_model(str(folder), torch.device("cpu"))
    policy = Policy(loaded.base, pad_id=loaded.pad_id, stop_ids=loaded.stop_ids, actor_lora=LoraSettings())
    envs = [make_env(data, loaded.tokenizer, "hermes") for _ in range(3)]
    codec = TextCodec(loaded.tokenizer, 30_000, render=envs[0].unwrapped.renderer, stop_ids=loaded.stop_ids)
    tasks = iter(range(3))
    rollout = play(envs, HFEngine(policy), codec, lambda thread: next(tasks, None), max_new_tokens=8,
                   generator=torch.Generator().manual_seed(0))
    followed = 0
    tokenizer, tasks = loaded.tokenizer, load_tasks(data)
    for episode in rollout.episodes:
        steps = [rollout.actions[i] for i in episode.action_indices]
        task = tasks[episode.task_index]
        first = tokenizer.apply_chat_template(task.question[0], tools=hinted_functions(task.functions, "python"),
                                              tokenize=False, add_generation_prompt=True)
        assert steps[0].context == tokenizer(first, add_special_tokens=False).input_ids
        for before, after in itertools.pairwise(steps):
            assert after.context[:len(before.context) + len(before.action)] == before.context + before.action
            followed += 1
    assert followed >= 6  # four turns each: the random model's text ends every turn
    # One iteration of training on it, then a resume for one more.
    flags = ["--model_name_or_path", str(folder), "--dataset_path", str(data), "--tool_format", "hermes",
             "--results_dir", str(tmp_path / "runs"), "--n_rollout_threads", "2", "--num_env_steps", "2",
             "--max_new_tokens", "8", "--lora_r", "4", "--ppo_epoch", "1", "--save_interval", "1",
             "--eval_interval", "0", "--no-progress"]
    run_dir = Runner(parse_config(flags), log=lambda message: None).run()
    assert (run_dir / "checkpoints" / "iter_000001" / "actor" / "adapter_model.safetensors").exists()
