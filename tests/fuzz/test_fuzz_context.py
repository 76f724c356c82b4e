"""Fuzzing long multi-turn episodes against the context window, through the rollout loop the
trainer runs (``fcenv.algos.rollout.play``): scripted actions (ground-truth calls, calls whose error
repeats a long argument, many calls at once, prose) on the bundled multi-turn tasks, with a
window anywhere from just above the first context to far above it.

Properties: playing never raises (a chat that outgrows the window mid-episode is no crash);
every episode ends; every context an action was sampled from fits the window; an episode that
ended because its chat outgrew the window ends on a failing verdict, and
``rollout/context_overflow_rate`` is exactly the share of such episodes.
"""

from __future__ import annotations

import gymnasium as gym
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from fcenv.algos.model.loading import load_model
from fcenv.algos.rollout.codec import CONTEXT_OVERFLOW, TextCodec
from fcenv.algos.rollout.play import play
from fcenv.algos.training.metrics import means, rollout_stats
from harness.strategies import fuzz_settings
from tests.support.scripted_engine import ScriptedEngine

pytestmark = pytest.mark.slow

NAMES = ["Grace", "Zed", "Bob", "'", "é", "USR384", "lunch at noon"]
long_argument = st.builds(lambda piece, times: f"[get_user_id(user={(piece * times)!r})]",
                          st.sampled_from(NAMES), st.integers(1, 120))
many_calls = st.integers(1, 40).map(lambda n: "[" + ", ".join(f"add(a={k}, b={k})" for k in range(n)) + "]")
prose = st.sampled_from(["Done.", "I cannot help with that.", "x " * 200, ""])
ground_truth = st.sampled_from(["[add(a=2, b=30)]", "[subtract(a=32, b=12)]", "[get_user_id(user='Grace')]",
                                "[send_message(receiver_id='USR384', message='running late')]"])
actions = st.lists(long_argument | many_calls | prose | ground_truth, min_size=1, max_size=8)


@pytest.fixture(scope="module")
def loaded(tiny_model):
    import torch

    return load_model(str(tiny_model), torch.device("cpu"))


def test_episodes_that_outgrow_the_window_end_failing_and_are_counted(loaded):
    envs = [gym.make("fcenv/FunctionCalling-v0", dataset_path="multi_turn_train", renderer=loaded.renderer,
                     system_prompt=loaded.system_prompt) for _ in range(2)]
    size = len(envs[0].unwrapped.tasks)
    overflowed = 0

    @fuzz_settings(80)
    @given(st.lists(st.integers(0, size - 1), min_size=1, max_size=3), st.integers(0, 400), actions)
    def holds(indices, margin, texts):
        nonlocal overflowed
        codec = TextCodec(loaded.tokenizer, 0, render=envs[0].unwrapped.renderer, stop_ids=loaded.stop_ids)
        # The trainer refuses a task whose first context cannot fit (setup.check_prompts): from there on it grows.
        codec.context_limit = max(len(codec.tokens(envs[0].reset(options={"index": i})[0])) for i in indices) + margin
        note(f"limit {codec.context_limit}")
        queue = list(indices)
        rollout = play(envs, ScriptedEngine(loaded.tokenizer, loaded.stop_ids[0], texts), codec,
                       lambda thread: queue.pop(0) if queue else None, max_new_tokens=1200)
        assert len(rollout.episodes) == len(indices)
        assert all(len(a.context) <= codec.context_limit for a in rollout.actions)
        ended = [rollout.actions[e.action_indices[-1]].info for e in rollout.episodes]
        over = [info for info in ended if info["error_type"] == CONTEXT_OVERFLOW]
        assert all(info["valid"] is False for info in over)
        figures = means(rollout_stats(rollout, "rollout"))
        assert figures["rollout/context_overflow_rate"] == pytest.approx(len(over) / len(ended))
        overflowed += len(over)

    holds()
    assert overflowed > 0, "no episode outgrew the window: the fuzzer missed the case it is for"
