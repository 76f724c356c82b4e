"""Property-based fuzzing of ``env.step``, single- and multi-turn (inputs: harness/strategies.py;
properties: harness/fuzz_properties.py).

Properties of every step: it does not raise; the observation is in the observation space; the
reward is a finite float in [0, 1] (BFCL's and the shaped reward); terminated and truncated
are bools; the reported facets are in [0, 1]. Multi-turn episodes run several fuzzed steps,
or the ground truth with a few steps changed, often to the end (a prose step ends a turn),
sometimes past the step limit of a turn, sometimes with a step of very many calls. The
tests work in an empty folder that must stay empty: injected code never runs.

Multi-turn steps also keep their work bounded: a step runs at most ``MAX_STEP_CALLS`` calls,
and in native tool-calling (FC) mode a step within a turn renders only its new messages, the
observation being what rendering the whole chat gives. And the tools may be hostile: episodes
on a user's backend that exits, raises ``BaseException`` subclasses, returns what cannot be
printed and holds state ``!=`` cannot compare (harness/hostile_tools.py) keep every property.
"""

from __future__ import annotations

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from fcenv.env import FunctionCallingEnv
from fcenv.handlers.base import MAX_STEP_CALLS
from harness.fuzz_properties import (
    FAMILIES,
    MULTI_TURN,
    REWARDS,
    SINGLE_TURN,
    assert_bounded_rendering,
    assert_step,
    env_choices,
    make_env,
    make_fc_env,
)
from harness.strategies import Choices, fuzz_for, fuzz_settings, task_text
from harness.strategies_multi_turn import episode_texts, in_family

pytestmark = pytest.mark.slow


@pytest.fixture
def empty_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    assert sorted(p.name for p in tmp_path.iterdir()) == []


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


def test_fc_multi_turn_episodes_do_bounded_work(bfcl_dir, empty_cwd):
    """In FC mode, long steps and long chats; every step's work is bounded."""
    fuzz = fuzz_for(bfcl_dir)
    envs = st.sampled_from([(c, f, r) for c in MULTI_TURN for f in FAMILIES for r in REWARDS])
    episodes = steps = long_steps = 0

    @fuzz_settings(600)
    @given(st.data())
    def episode_holds(data):
        nonlocal episodes, steps, long_steps
        r = Choices(data.draw)
        category, family, reward = r.draw(envs)
        env, counting = make_fc_env(bfcl_dir, category, family, reward)
        env.reset(options={"index": r.number(0, len(env.tasks) - 1)})
        whole = r.one_in(4)  # the full rendering costs what the bound saves: compared on some episodes
        for text in (in_family(r, family, t) for t in episode_texts(r, fuzz, env.task)):
            note(f"step: {text[:2000]!r}")
            before = len(env._episode.messages)
            counting.sizes.clear()
            result = env.step(text)
            terminated, truncated = assert_step(env, result)
            assert_bounded_rendering(env, counting, before, result, whole)
            steps += 1
            long_steps += text.count("<tool_call>") > MAX_STEP_CALLS or text.count('"name"') > MAX_STEP_CALLS
            if terminated or truncated:
                break
        episodes += 1

    episode_holds()
    assert episodes >= 600 and long_steps > 10
    print(f"FC multi-turn fuzz: {episodes} episodes, {steps} steps, {long_steps} with more calls than a step runs")


def test_multi_turn_episodes_on_hostile_tools(bfcl_dir, tmp_path_factory, empty_cwd):
    """A user's tools that misbehave on the model's input never break a step."""
    from harness.hostile_tools import write_tasks

    env = FunctionCallingEnv(write_tasks(tmp_path_factory.mktemp("hostile")), reward="shaped")
    fuzz = fuzz_for(bfcl_dir)
    episodes = finished = valid = 0

    @fuzz_settings(600)
    @given(st.data())
    def episode_holds(data):
        nonlocal episodes, finished, valid
        r = Choices(data.draw)
        env.reset(options={"index": r.number(0, len(env.tasks) - 1)})
        for text in episode_texts(r, fuzz, env.task):
            note(f"step: {text[:2000]!r}")
            result = env.step(text)
            terminated, truncated = assert_step(env, result)
            if terminated or truncated:
                finished += 1
                valid += result[4]["valid"]
                break
        episodes += 1

    episode_holds()
    assert episodes >= 600 and finished > 100 and valid > 10
    print(f"hostile-tool fuzz: {episodes} episodes, {finished} run to the end, {valid} valid")
