"""The rewards mean what BFCL means: a valid answer earns 1.0, an answer BFCL fails earns less.

Checked through ``env.step`` in every single-turn category BFCL has and in the multi-turn
ones, with the answers an agent hunting for unearned reward would try, and the docs'
table of example outputs and their rewards (docs/rewards.md) is checked against the code.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from fcenv.algos.model.warmup import answer_text
from fcenv.checkers import facet_weights, register_checker
from fcenv.checkers.result import CheckResult
from fcenv.bundled import BUNDLED
from fcenv.data import load_tasks
from fcenv.env import FunctionCallingEnv
from fcenv.rewards import INVALID_CAP, ShapedReward, bfcl_reward, get_reward_fn
from harness.trajectories import ground_truth_steps

ROOT = Path(__file__).resolve().parents[2]
TINY_EVAL = BUNDLED["tiny_eval"]
SINGLE_TURN = ["simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
               "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"]


def reward_of(env, index_or_id, text):
    key = "id" if isinstance(index_or_id, str) else "index"
    env.reset(options={key: index_or_id})
    _, reward, _, _, info = env.step(text)
    return reward, info["valid"]


def corruptions(text: str, rng: random.Random) -> list[str]:
    """Answers near the right one: a changed digit or letter, a dropped argument, prose
    before it, a second copy of a call, nothing at all."""
    out = ["", "[]", "I cannot help with that.", "Sure! " + text, text + " " + text]
    digits = [m.start() for m in re.finditer(r"\d", text)]
    if digits:
        i = rng.choice(digits)
        out.append(text[:i] + str((int(text[i]) + 1) % 10) + text[i + 1:])
    letters = [m.start() for m in re.finditer(r"(?<=')[a-z]", text)]
    if letters:
        i = rng.choice(letters)
        out.append(text[:i] + ("q" if text[i] != "q" else "z") + text[i + 1:])
    if ", " in text and text.startswith("["):
        out.append(text.split(", ")[0] + ")]")
    if text.startswith("[") and text.endswith("]"):
        out.append(text[:-1] + ", " + text[1:])  # every call twice
    return out


@pytest.mark.parametrize("category", SINGLE_TURN)
@pytest.mark.parametrize("reward", ["bfcl", "shaped", "steps"])
def test_single_turn_valid_earns_one_and_failing_earns_less(bfcl_dir, category, reward):
    path = bfcl_dir / f"BFCL_v4_{category}.json"
    env = FunctionCallingEnv(path, reward=reward)
    rng = random.Random(category)
    tasks = env.unwrapped.tasks if hasattr(env, "unwrapped") else env.tasks
    seen = {True: 0, False: 0}
    for index in rng.sample(range(len(tasks)), min(25, len(tasks))):
        truth = answer_text(tasks[index].ground_truth)
        for text in [truth, *corruptions(truth, rng)]:
            value, valid = reward_of(env, index, text)
            seen[valid] += 1
            if valid:
                assert value == 1.0, (tasks[index].id, text)
            else:
                assert value <= INVALID_CAP < 1.0, (tasks[index].id, text, value)
    assert seen[True] and seen[False]


@pytest.mark.parametrize("category", ["irrelevance", "live_irrelevance", "live_relevance"])
def test_relevance_categories_pay_the_verdict_in_full(bfcl_dir, category):
    env = FunctionCallingEnv(bfcl_dir / f"BFCL_v4_{category}.json", reward="shaped")
    name = env.tasks[0].functions[0]["name"]
    for text in ["I cannot answer that with these functions.", "", "[]", f"[{name}(x=1)]", "Sure! [" + name + "()]"]:
        value, valid = reward_of(env, 0, text)
        assert value == (1.0 if valid else value) and (valid or value < 1.0), (text, value)


def test_a_prose_refusal_on_irrelevance_earns_what_silence_earns(bfcl_dir):
    env = FunctionCallingEnv(bfcl_dir / "BFCL_v4_irrelevance.json", reward="shaped")
    refusal = reward_of(env, 0, "None of the functions can answer this; I need a weather service instead.")
    silence = reward_of(env, 0, "")
    call = reward_of(env, 0, f"[{env.tasks[0].functions[0]['name']}()]")
    assert refusal == silence == (1.0, True)
    assert call[1] is False and call[0] < 1.0


# ---------------------------------------------------------------- what an attacker would try

@pytest.fixture(scope="module")
def tiny_env():
    return FunctionCallingEnv(TINY_EVAL, reward="shaped")


def test_reward_hacks_do_not_pay(tiny_env):
    """Entry 0: "Set an alarm for hour 10 minute 16." Entry parallel_0 asks for two calls."""
    right = "[set_alarm(hour=10, minute=16)]"
    near_miss = "[set_alarm(hour=10, minute=17)]"
    hacks = {
        "hedge with a second call": "[set_alarm(hour=10, minute=16), set_alarm(hour=10, minute=17)]",
        "every alternative": "[" + ", ".join(f"set_alarm(hour=10, minute={m})" for m in range(60)) + "]",
        "the right call three times": "[" + ", ".join(["set_alarm(hour=10, minute=16)"] * 3) + "]",
        "empty list": "[]",
        "nothing": "",
        "prose padding": "Sure! Here you go: " + right,
        "prose after": right + " I hope this helps!",
    }
    assert reward_of(tiny_env, 0, right) == (1.0, True)
    honest, valid = reward_of(tiny_env, 0, near_miss)
    assert not valid and 0.0 < honest <= INVALID_CAP
    for name, text in hacks.items():
        value, valid = reward_of(tiny_env, 0, text)
        assert not valid and value < honest, (name, value, honest)


def test_duplicates_in_a_parallel_answer_do_not_pay(tiny_env):
    task = next(t for t in tiny_env.tasks if t.id == "parallel_0")
    right = answer_text(task.ground_truth)
    first = right[1:].split("), ")[0] + ")"
    second = right[1:-1].split("), ")[1]
    assert reward_of(tiny_env, "parallel_0", right) == (1.0, True)
    only_first, _ = reward_of(tiny_env, "parallel_0", f"[{first}]")
    duplicated, valid = reward_of(tiny_env, "parallel_0", f"[{first}, {first}]")
    padded, _ = reward_of(tiny_env, "parallel_0", f"[{first}, {second}, {first}, {second}]")
    assert not valid and duplicated <= only_first + 1e-9 < 1.0
    assert padded <= INVALID_CAP


# ---------------------------------------------------------------- multi-turn

def play(env, task_id, turns):
    env.reset(options={"id": task_id})
    rewards, info = [], {}
    for steps in turns:
        for text in steps:
            _, reward, terminated, truncated, info = env.step(text)
            rewards.append(reward)
    return rewards, info


@pytest.fixture(scope="module")
def multi_turn(bfcl_dir):
    path = bfcl_dir / "BFCL_v4_multi_turn_base.json"
    return path, {t.id: t for t in load_tasks(path)}


def _state_breaking(turns):
    """The same trajectory with one numeric or string argument of the first call changed."""
    broken = [list(steps) for steps in turns]
    for steps in broken:
        if steps[0].startswith("["):
            match = re.search(r"=(\d+)|='([^']*)'", steps[0])
            if match:
                start, end = match.span()
                value = match.group(1)
                steps[0] = steps[0][:start] + (f"={int(value) + 7}" if value else "='zz_changed'") + steps[0][end:]
                return broken
    return None


@pytest.mark.parametrize("reward", ["shaped", "bfcl", "steps"])
def test_multi_turn_failing_episodes_earn_less_than_the_ground_truth(multi_turn, reward):
    path, tasks = multi_turn
    env = FunctionCallingEnv(path, reward=reward)
    compared = 0
    for task in list(tasks.values())[:40]:
        truth = ground_truth_steps(task)
        rewards, info = play(env, task.id, truth)
        assert info["valid"] and sum(rewards) == pytest.approx(1.0), task.id
        broken = _state_breaking(truth)
        if broken is None:
            continue
        rewards_b, info_b = play(env, task.id, broken)
        if info_b["valid"]:  # the change happened not to matter to BFCL
            continue
        compared += 1
        assert sum(rewards_b) < 1.0 - 1e-9, (task.id, info_b["error_type"], rewards_b)
    assert compared >= 10


def test_a_turn_failing_the_state_check_earns_less_than_one_that_passes(multi_turn):
    path, tasks = multi_turn
    env = FunctionCallingEnv(path, reward="shaped")
    checked = 0
    for task in list(tasks.values())[:40]:
        truth = ground_truth_steps(task)
        broken = _state_breaking(truth)
        if broken is None:
            continue
        env.reset(options={"id": task.id})
        for steps_t, steps_b in zip(truth, broken):
            if steps_t != steps_b:
                break
            for text in steps_t:
                env.step(text)
        snapshot = env.snapshot()
        paid = {}
        for name, steps in (("truth", steps_t), ("broken", steps_b)):
            env.restore(snapshot)
            for text in steps:
                _, reward, _, _, info = env.step(text)
            paid[name] = (reward, info.get("turn_valid"), info.get("turn_error_type"))
        if paid["broken"][1] is False and paid["broken"][2] in ("multi_turn:instance_state_mismatch",
                                                                 "multi_turn:execution_response_mismatch"):
            checked += 1
            assert paid["truth"][1] is True
            assert paid["broken"][0] < paid["truth"][0], (task.id, paid)
    assert checked >= 5


def test_the_callable_bfcl_reward_behaves_like_the_named_one(multi_turn):
    path, tasks = multi_turn
    named = FunctionCallingEnv(path, reward="bfcl")
    called = FunctionCallingEnv(path, reward=bfcl_reward)
    shaped_named = FunctionCallingEnv(path, reward="shaped")
    shaped_called = FunctionCallingEnv(path, reward=ShapedReward())
    for task in list(tasks.values())[:10]:
        turns = ground_truth_steps(task)
        broken = _state_breaking(turns) or turns
        for trajectory in (turns, broken):
            assert play(named, task.id, trajectory)[0] == play(called, task.id, trajectory)[0]
            assert play(shaped_named, task.id, trajectory)[0] == play(shaped_called, task.id, trajectory)[0]
    rewards, _ = play(named, task.id, turns)
    assert rewards[:-1] == [0.0] * (len(rewards) - 1) and rewards[-1] == 1.0  # only the verdict is paid


# ---------------------------------------------------------------- weights

def test_every_facet_a_built_in_checker_produces_has_a_declared_weight():
    weights = facet_weights()
    for name in ("decodable", "function_name", "required_args", "types", "values", "abstained", "called",
                 "executed", "ground_truth_recall", "state", "response", "step_executed", "step_in_ground_truth"):
        assert name in weights, name
    assert weights["state"] > 0 and weights["response"] > 0


def test_an_unweighted_facet_is_an_error_not_silently_unpaid():
    reward = ShapedReward()
    with pytest.raises(ValueError, match="no weight for facet.*'politeness'"):
        reward(CheckResult(False, "x", [], {"decodable": 1.0, "politeness": 1.0}))


def test_reward_weights_are_checked():
    with pytest.raises(ValueError, match=r"unknown facet\(s\) \['valeus'\]"):
        get_reward_fn("shaped", {"valeus": 2.0})
    with pytest.raises(ValueError, match="weighted rewards such as .shaped.; reward=.bfcl. pays the verdict"):
        get_reward_fn("bfcl", {"values": 2.0})
    with pytest.raises(ValueError, match="finite number"):
        get_reward_fn("shaped", {"values": -1})
    assert get_reward_fn("shaped", {"values": 0.0}).weights["values"] == 0.0


def test_a_facet_name_has_one_weight_across_checkers(monkeypatch):
    # The registration lasts for this test only (the fuzzers run, and the docs test lists, every
    # registered checker).
    from fcenv import checkers
    checkers.available_checkers()  # loads the built-in checkers first
    monkeypatch.setattr(checkers._CHECKERS, "_entries", dict(checkers._CHECKERS._entries))
    monkeypatch.setattr(checkers, "_FACETS", dict(checkers._FACETS))
    register_checker("conflicting_for_test", facets={"decodable": 5.0})(lambda task, decoded: None)
    with pytest.raises(ValueError, match="facet 'decodable' is declared with weight"):
        facet_weights()


# ---------------------------------------------------------------- the docs' table (docs/rewards.md)

def test_the_docs_reward_table_matches_the_code(tiny_env):
    page = (ROOT / "docs" / "rewards.md").read_text()
    table = page.split("<!-- reward-table -->")[1]
    rows = re.findall(r"^\| `([^`]*)` \| [^|]+ \| ([\d.]+) \| ([\d.]+) \|", table, re.M)
    assert len(rows) >= 8
    bfcl_env = FunctionCallingEnv(TINY_EVAL, reward="bfcl")
    for text, bfcl_value, shaped_value in rows:
        text = text.replace("\\|", "|")
        assert reward_of(bfcl_env, 0, text)[0] == pytest.approx(float(bfcl_value), abs=0.005), text
        assert reward_of(tiny_env, 0, text)[0] == pytest.approx(float(shaped_value), abs=0.005), text


def test_step_rewards_pay_progress_where_it_happens_and_never_more_than_the_verdict():
    """reward="steps" (StepTool): a right call is paid at its step, a valid episode earns 1.0 in
    total, stopping early earns less, and calls that run but do not help earn at most half a
    turn however many there are."""
    from fcenv.algos.model.warmup import ground_truth_steps as steps_of
    from fcenv.algos.tiny.build import MULTI_TURN_EVAL

    env = FunctionCallingEnv(MULTI_TURN_EVAL, reward="steps")
    checked = 0
    for index, task in enumerate(env.tasks[:30]):
        steps = [step.text for step in steps_of(task)]
        env.reset(options={"index": index})
        rewards = [env.step(text)[1] for text in steps]
        assert sum(rewards) == pytest.approx(1.0), task.id
        assert rewards[0] > 0  # the first right call is paid at once
        env.reset(options={"index": index})
        early = [env.step(steps[0])[1], env.step("Done.")[1]]
        assert sum(early) < 1.0 - 1e-9
        if len(task.ground_truth) == 1:
            env.reset(options={"index": index})
            first = steps[0]
            # the same right call again and again: it runs, but matches the ground truth once
            spam = [env.step(first)[1] for _ in range(6)] + [env.step("Done.")[1]]
            assert sum(spam) <= 0.5 + 1e-9, task.id
            checked += 1
    assert checked >= 10
