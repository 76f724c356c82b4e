"""The env's prompt variations (BFCL v4 format sensitivity) for training: ``prompt_variation``.

"random" draws one of BFCL's 26 configurations per episode: the prompts vary, each is the
drawn configuration's, and the answer is read in its format, so that a valid answer written as
that prompt asks gets BFCL's runner's verdict (oracle: bfcl-eval's ``_evaluate_single_ast_entry``
as its format-sensitivity runner calls it).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from fcenv.env import FunctionCallingEnv
from fcenv.format_sensitivity import load_set
from fcenv.prompt_variations import DEFAULT_CONFIG, PromptVariation, format_sensitivity_configs
from fcenv.prompts import hinted_functions
from harness.format_answers import render_answer
from harness.generators import answer_calls


@pytest.fixture(scope="module")
def set_tasks(bfcl_dir):
    entries = load_set(bfcl_dir / "BFCL_v4_format_sensitivity.json", configs=format_sensitivity_configs()[:1])
    return [entry.task for entry in entries]


def test_random_draws_varied_prompts_each_the_drawn_configurations(set_tasks):
    env = FunctionCallingEnv(tasks=set_tasks, prompt_variation="random")
    drawn = Counter()
    for episode in range(200):
        _, info = env.reset(seed=7 if episode == 0 else None)
        variation = PromptVariation.parse(info["prompt_variation"])
        drawn[variation.config] += 1
        task = env.task
        system = info["messages"][0]  # an entry's own system message follows the prompt
        assert system["role"] == "system"
        assert system["content"].startswith(variation.system_prompt(hinted_functions(task.functions, "python")))
    assert len(drawn) >= 20  # 200 draws over 26 configurations
    again = FunctionCallingEnv(tasks=set_tasks, prompt_variation="random")
    firsts = [again.reset(seed=7)[1]["prompt_variation"] for _ in range(3)]
    assert len(set(firsts)) == 1  # a seeded reset draws the same configuration again


def test_no_variation_keeps_bfcls_default_prompt(set_tasks):
    default = FunctionCallingEnv(tasks=set_tasks[:3])
    named = FunctionCallingEnv(tasks=set_tasks[:3], prompt_variation=DEFAULT_CONFIG)
    _, info = default.reset(options={"index": 0})
    assert "prompt_variation" not in info
    _, info_named = named.reset(options={"index": 0})
    # ret_fmt=python, no tag, json docs, plain text, classic: BFCL's default prompt itself
    assert info_named["messages"] == info["messages"]


@pytest.mark.oracle
def test_a_valid_answer_gets_bfcls_verdict_in_every_configuration(oracle, set_tasks):
    rng = random.Random(404)
    env = FunctionCallingEnv(tasks=set_tasks, prompt_variation="none")
    cases = []
    for config in format_sensitivity_configs():
        for index in rng.sample(range(len(set_tasks)), 8):
            _, info = env.reset(options={"index": index, "prompt_variation": config})
            assert info["prompt_variation"] == config
            task = env.task
            text = render_answer(answer_calls(task, rng, omit=rng.random() < 0.5), PromptVariation.parse(config))
            _, reward, terminated, _, step_info = env.step(text)
            assert terminated
            cases.append((config, task, text, step_info["valid"], step_info["error_type"]))
    theirs = oracle.run([{"op": "variation_single", "text": text, "config": config, "id": task.id,
                          "function": task.functions, "ground_truth": task.ground_truth}
                         for config, task, text, _, _ in cases])
    differ = [(case[0], case[1].id, case[2], case[3:], (r["valid"], r["error_type"]))
              for case, r in zip(cases, theirs) if (case[3], case[4]) != (r["valid"], r["error_type"])]
    assert not differ, f"{len(differ)} of {len(cases)} verdicts differ; first: {differ[0]}"
    assert sum(valid for *_, valid, _ in cases) >= 0.8 * len(cases)  # written as asked, nearly all pass


@pytest.mark.parametrize(("options", "message"), [
    ({"prompt_variation": "ret_fmt=yaml"}, "not one of BFCL's"),
    ({"prompt_variation": "random", "tool_format": "hermes"}, "no place with tool_format"),
    ({"prompt_variation": "random", "handler": "python"}, "no place with handler"),
    ({"prompt_variation": "random", "system_prompt": "Call {functions}"}, "no place with system_prompt"),
])
def test_bad_choices_are_refused_when_the_env_is_built(set_tasks, options, message):
    with pytest.raises(ValueError, match=message):
        FunctionCallingEnv(tasks=set_tasks[:2], **options)


def test_the_training_flag_is_declared_once_and_checked():
    import argparse

    from fcenv.algos.config import TrainConfig, validate
    from fcenv.flags import TOOL_FORMAT, problems

    assert TrainConfig().prompt_variation == ""
    assert any("--prompt_variation" in p for p in validate(TrainConfig(prompt_variation="ret_fmt=yaml")))
    assert not any("--prompt_variation" in p for p in validate(TrainConfig(prompt_variation="random")))
    args = argparse.Namespace(prompt_variation="random", tool_format="hermes", system_prompt="", handler="")
    assert any("no place with --tool_format" in p for p in problems(args, TOOL_FORMAT))
