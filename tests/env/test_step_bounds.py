"""A multi-turn step's work is bounded, and does not grow with the chat.

A step runs at most ``MAX_STEP_CALLS`` calls, in every format (a step with more holds none, as
a text too large to parse holds none); within a turn a step renders only its new messages (the
built-in renderers extend their last rendering) and copies only its new messages into
``info["messages"]``, and what it shows is exactly what rendering the whole chat shows.
"""

from __future__ import annotations

import random

import pytest

from fcenv.env import FunctionCallingEnv
from fcenv.prompts import MessageRenderer
from fcenv.tool_formats import TemplateRenderer, get_tool_format
from fcenv.handlers import Call
from fcenv.handlers.base import MAX_STEP_CALLS
from harness.fuzz_properties import CountingRenderer
from harness.generators_fc import fc_turns
from harness.trajectories import ground_truth_steps

MODES = ("prompting", "hermes", "llama_json", "mistral")


def calls_text(mode: str, count: int, name: str = "mkdir") -> str:
    """``count`` calls in the mode's format: ``mkdir`` of new folders, or ``pwd()``."""
    calls = [Call(name, {"dir_name": f"d{i}"} if name == "mkdir" else {}) for i in range(count)]
    if mode == "prompting":
        return "[" + ", ".join(f"{c.name}({', '.join(f'{k}={v!r}' for k, v in c.arguments.items())})" for c in calls) + "]"
    return get_tool_format(mode).write(calls)


def make_env(bfcl_dir, mode, **options):
    return FunctionCallingEnv(bfcl_dir / "BFCL_v4_multi_turn_base.json", reward="shaped",
                              tool_format=None if mode == "prompting" else mode, **options)


@pytest.mark.parametrize("mode", MODES)
def test_a_step_runs_at_most_max_step_calls(bfcl_dir, mode):
    env = make_env(bfcl_dir, mode)
    env.reset(options={"id": "multi_turn_base_0"})
    _, _, _, _, info = env.step(calls_text(mode, MAX_STEP_CALLS))
    assert len(info["results"]) == MAX_STEP_CALLS and "turn_valid" not in info
    folders = set(env.unwrapped._episode.trajectory.model.public_state("GorillaFileSystem")["root"].__dict__)
    _, reward, terminated, truncated, info = env.step(calls_text(mode, MAX_STEP_CALLS + 1))
    assert "results" not in info and info["turn"] == 0 and "turn_valid" in info  # no call: the turn ended
    assert not (terminated or truncated) and 0.0 <= reward <= 1.0
    assert set(env.unwrapped._episode.trajectory.model.public_state("GorillaFileSystem")["root"].__dict__) == folders


@pytest.mark.parametrize("mode", MODES)
def test_a_step_renders_and_copies_only_its_new_messages(bfcl_dir, mode):
    env = make_env(bfcl_dir, mode)
    full = env.renderer
    assert isinstance(full, TemplateRenderer if mode != "prompting" else MessageRenderer)
    env.renderer = counting = CountingRenderer(full)
    for entry in ("multi_turn_base_0", "multi_turn_base_10"):
        _, reset_info = env.reset(options={"id": entry})
        turns = ground_truth_steps(env.task)
        if mode != "prompting":
            turns = fc_turns(mode, turns, random.Random(0), fault_rate=0.0)
        texts = [s for steps in turns for s in steps]
        texts.insert(1, calls_text(mode, 40, "pwd"))  # a long step in the first turn
        previous = reset_info["messages"]
        for text in texts:
            before = len(env._episode.messages)
            counting.sizes.clear()
            observation, _, terminated, truncated, info = env.step(text)
            chat, tools = env._episode.messages, env._episode.tools
            # What a step shows is what rendering the whole chat shows, ...
            assert observation == (full(chat) if mode == "prompting" else full(chat, tools))
            assert info["messages"] == chat and all(a is not b for a, b in zip(info["messages"], chat))
            # ... and within a turn it renders and copies only the step's new messages.
            if "turn_valid" not in info:
                assert counting.sizes == [len(chat) - before], (counting.sizes, len(chat) - before)
                assert all(a is b for a, b in zip(info["messages"], previous))
            previous = info["messages"]
            if terminated or truncated:
                break
        assert info["valid"], info["error_type"]
