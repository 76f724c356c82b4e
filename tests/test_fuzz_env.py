"""Property-based fuzzing of ``env.step``, single- and multi-turn (inputs: tests/strategies.py).

Properties of every step: it does not raise; the observation is in the observation space; the
reward is a finite float in [0, 1] (BFCL's and the shaped reward); terminated and truncated
are bools; the reported facets are in [0, 1]. Multi-turn episodes run several fuzzed steps,
or the ground truth with a few steps changed, often to the end (a prose step ends a turn),
sometimes past the step limit of a turn. The
tests work in an empty folder that must stay empty: injected code never runs.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from fcenv.env import FunctionCallingEnv
from tests.strategies import Choices, fuzz_for, fuzz_settings, task_text
from tests.strategies_multi_turn import episode_texts

pytestmark = pytest.mark.slow

# One env per family of single-turn categories, each with both rewards; BFCL's decoder for
# the category (None), and, for some, the lenient "auto" decoder or JSON tool calls, whose
# arguments reach the checkers and backends with JSON's types.
SINGLE_TURN = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple",
               "live_parallel_multiple", "simple_java", "simple_javascript", "irrelevance", "live_irrelevance",
               "live_relevance")
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
REWARDS = ("bfcl", "shaped")
OTHER_HANDLERS = {"simple_python": ("auto", "json"), "live_multiple": ("auto",), "irrelevance": ("tool_call",),
                  "multi_turn_base": ("auto", "json"), "multi_turn_long_context": ("auto",)}


def env_choices(categories: tuple[str, ...]) -> list[tuple[str, str, str | None]]:
    return [(c, r, h) for c in categories for r in REWARDS for h in (None, None, None, *OTHER_HANDLERS.get(c, ()))]


@cache
def make_env(bfcl_dir: Path, category: str, reward: str, handler: str | None = None) -> FunctionCallingEnv:
    return FunctionCallingEnv(bfcl_dir / f"BFCL_v4_{category}.json", reward=reward, handler=handler)


@pytest.fixture
def empty_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def assert_step(env: FunctionCallingEnv, result) -> tuple[bool, bool]:
    obs, reward, terminated, truncated, info = result
    assert env.observation_space.contains(obs)
    assert type(reward) is float and math.isfinite(reward) and 0.0 <= reward <= 1.0, reward
    assert type(terminated) is bool and type(truncated) is bool
    assert type(info["valid"]) is bool
    assert all(0.0 <= value <= 1.0 for value in info["facets"].values()), info["facets"]
    return terminated, truncated


def test_single_turn_steps(bfcl_dir, empty_cwd):
    fuzz = fuzz_for(bfcl_dir)
    envs = st.sampled_from(env_choices(SINGLE_TURN))
    ran = 0

    @fuzz_settings(16_000)
    @given(st.data())
    def step_holds(data):
        nonlocal ran
        r = Choices(data.draw)
        env = make_env(bfcl_dir, *r.draw(envs))
        env.reset(options={"index": r.number(0, len(env.tasks) - 1)})
        text = task_text(r, fuzz, env.task)
        note(f"text: {text!r}")
        terminated, truncated = assert_step(env, env.step(text))
        assert terminated and not truncated
        ran += 1

    step_holds()
    assert ran >= 16_000


def test_multi_turn_episodes(bfcl_dir, empty_cwd):
    fuzz = fuzz_for(bfcl_dir)
    envs = st.sampled_from(env_choices(MULTI_TURN))
    episodes = steps = finished = valid = 0

    @fuzz_settings(2_500)
    @given(st.data())
    def episode_holds(data):
        nonlocal episodes, steps, finished, valid
        r = Choices(data.draw)
        env = make_env(bfcl_dir, *r.draw(envs))
        env.reset(options={"index": r.number(0, len(env.tasks) - 1)})
        texts = episode_texts(r, fuzz, env.task)
        for text in texts:
            note(f"step: {text!r}")
            result = env.step(text)
            terminated, truncated = assert_step(env, result)
            steps += 1
            if terminated or truncated:
                finished += 1
                valid += result[4]["valid"]
                break
        episodes += 1

    episode_holds()
    # Both verdicts are well represented, so the checks above ran on right and wrong episodes.
    assert episodes >= 2_500 and finished > 1_000 and valid > 100
    print(f"multi-turn fuzz: {episodes} episodes, {steps} steps, {finished} run to the end, {valid} valid")
