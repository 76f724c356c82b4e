"""The prompt a model sees equals BFCL's, for every entry of every category we load."""

from __future__ import annotations

import json

import pytest

from fcenv.data import load_tasks
from fcenv.prompts import (
    get_renderer,
    hinted_functions,
    render_chatml,
    system_prompt,
    with_system_prompt,
)

CATEGORIES = [
    "simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
    "irrelevance", "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
    "live_irrelevance", "live_relevance", "multi_turn_base", "multi_turn_miss_func",
    "multi_turn_miss_param", "multi_turn_long_context",
]


def first_turn(task) -> list[dict]:
    prompt = system_prompt(hinted_functions(task.functions, task.language))
    return with_system_prompt(task.question[0], prompt)


@pytest.mark.oracle
def test_first_turn_messages_equal_bfcl(oracle, bfcl_dir):
    requests, ours = [], []
    for category in CATEGORIES:
        path = bfcl_dir / f"BFCL_v4_{category}.json"
        raw = {json.loads(line)["id"]: json.loads(line) for line in path.read_text().splitlines() if line.strip()}
        for task in load_tasks(path):
            entry = {"id": task.id, "question": task.question, "function": task.functions}
            requests.append({"op": "prompt", "entry": entry})
            ours.append(first_turn(task))
            assert raw[task.id]["question"] == task.question  # loading changes nothing
    answers = oracle.run(requests)
    mismatches = [(r["entry"]["id"], a["messages"], o) for r, a, o in zip(requests, answers, ours) if a["messages"] != o]
    assert not mismatches, f"{len(mismatches)} of {len(requests)} differ; first: {mismatches[0]}"
    assert len(requests) > 4000


def test_system_message_is_merged_not_duplicated():
    merged = with_system_prompt([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}], "PROMPT")
    assert merged == [{"role": "system", "content": "PROMPT\n\nBe brief."}, {"role": "user", "content": "hi"}]


def test_hints_never_touch_the_original_docs():
    docs = [{"name": "f", "description": "d", "parameters": {"type": "dict", "properties": {"x": {"type": "long", "description": "x"}}}}]
    before = json.dumps(docs)
    hinted = hinted_functions(docs, "java")
    assert json.dumps(docs) == before
    assert hinted[0]["parameters"]["properties"]["x"]["type"] == "string"


def test_renderers():
    messages = [{"role": "user", "content": "hi"}]
    assert render_chatml(messages) == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    assert get_renderer("plain")(messages) == "User: hi\n\nAssistant:"
    with pytest.raises(ValueError, match="unknown renderer"):
        get_renderer("nope")
