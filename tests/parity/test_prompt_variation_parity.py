"""BFCL's prompt variations (format sensitivity) against bfcl-eval's own code in the oracle venv.

For every one of BFCL's 26 configurations: the first turn a model is shown (system prompt with
the function docs in the configuration's doc format, then the question) equals what BFCL's
``system_prompt_pre_processing_chat_model`` builds for the format-sensitivity id of the entry,
for every entry of the set; entries whose docs hold defaults, enums, nested properties, item or
value types are also rendered in every doc format and prompt style. And our decoder for each
configuration reads answers (right, wrong, reformatted, in another format, hostile) exactly as
BFCL's ``default_decode_ast_prompting`` with that return format and tag does.
"""

from __future__ import annotations

import json
import random

import pytest

from fcenv.data import load_tasks
from fcenv.episode import EpisodeSettings, first_turn_messages
from fcenv.format_sensitivity import load_set
from fcenv.prompt_variations import PromptVariation, all_variations, format_sensitivity_configs
from harness.decoder_parity import our_answer
from harness.format_answers import SET_CATEGORIES, variation_texts

pytestmark = pytest.mark.oracle

_TRICKY = ('"default"', '"enum"', '"additionalProperties"', '"items"', '"properties": {"')
# One configuration per doc format, and the Markdown and experimental ones.
_DOC_AND_STYLE = [v for v in all_variations() if v.return_format == "python" and v.tool_call_tag
                  ] + all_variations()[-2:]


def _request(task, config: str) -> dict:
    entry = {"id": f"format_sensitivity_0:{config}:{task.id}", "question": task.question, "function": task.functions}
    return {"op": "prompt", "entry": entry}


def _tricky_tasks(bfcl_dir, per_category: int = 60):
    rng = random.Random(36)
    chosen = []
    for category in SET_CATEGORIES:
        tasks = [t for t in load_tasks(bfcl_dir / f"BFCL_v4_{category}.json")
                 if any(mark in json.dumps(t.functions) for mark in _TRICKY)]
        chosen += rng.sample(tasks, min(per_category, len(tasks)))
    return chosen


def test_the_configurations_are_bfcls(oracle):
    reference, = oracle.run([{"op": "variation_configs"}])
    assert reference["configs"] == format_sensitivity_configs()


def test_every_prompt_of_every_configuration_is_bfcls(oracle, bfcl_dir):
    cases = [(entry.task, entry.variation) for entry in load_set(bfcl_dir / "BFCL_v4_format_sensitivity.json")]
    cases += [(task, variation) for task in _tricky_tasks(bfcl_dir) for variation in _DOC_AND_STYLE]
    answers = oracle.run([_request(task, variation.config) for task, variation in cases])
    mismatches = []
    for (task, variation), answer in zip(cases, answers):
        ours = first_turn_messages(task, EpisodeSettings(prompt_variation=variation))
        if ours != answer["messages"]:
            mismatches.append((task.id, variation.config, ours[0]["content"][:3000], answer["messages"]))
    assert not mismatches, f"{len(mismatches)} of {len(cases)} prompts differ; first: {mismatches[0]}"
    assert len(cases) >= 26 * 200 + 5 * 300
    assert {variation.config for _, variation in cases} == set(format_sensitivity_configs())


@pytest.mark.parametrize("config", format_sensitivity_configs())
def test_each_configurations_decoder_reads_answers_as_bfcl(oracle, bfcl_dir, config):
    variation = PromptVariation.parse(config)
    texts = variation_texts(bfcl_dir, variation)
    theirs = oracle.run([{"op": "variation_decode", "text": text, "config": config} for text in texts])
    found = []
    for text, reference in zip(texts, theirs):
        reference = {k: reference[k] for k in ("ok", "kind", "decoded") if k in reference}
        ours = our_answer(text, variation.handler)
        if ours != reference:
            found.append((text, ours, reference))
    assert not found, f"{len(found)} of {len(texts)} texts decode differently; first: {found[0]}"
    outcomes = {r["ok"] for r in theirs}
    assert outcomes == {True, False}  # the texts exercise both readings
