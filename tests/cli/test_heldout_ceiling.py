"""The held-out client's any-format ceiling (bench/heldout.py, harness/any_format.py): an FC
answer whose calls are right but written as a ```json block fails BFCL and counts toward the
ceiling; a right <tool_call> block counts toward both; a wrong call toward neither; and on an
irrelevance entry a fenced invented call is a call, so it fails the ceiling too."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym

import fcenv
from harness.any_format import any_format_verdicts

WEATHER = {"name": "get_weather", "description": "Weather in a city.",
           "parameters": {"type": "dict", "properties": {"city": {"type": "string", "description": "City."}},
                          "required": ["city"]}}


def write_tasks(folder: Path) -> Path:
    questions = [{"id": "simple_python_0", "question": [[{"role": "user", "content": "Weather in Lyon?"}]],
                  "function": [WEATHER]},
                 {"id": "irrelevance_0", "question": [[{"role": "user", "content": "Tell me a joke."}]],
                  "function": [WEATHER]}]
    answers = [{"id": "simple_python_0", "ground_truth": [{"get_weather": {"city": ["Lyon"]}}]}]
    (folder / "possible_answer").mkdir()
    path = folder / "tasks.json"
    path.write_text("".join(json.dumps(q) + "\n" for q in questions))
    (folder / "possible_answer" / "tasks.json").write_text("".join(json.dumps(a) + "\n" for a in answers))
    return path


def test_fenced_json_counts_toward_the_ceiling_and_not_toward_bfcl(tmp_path):
    data = write_tasks(tmp_path)

    def make_env():
        return gym.make(fcenv.ENV_ID, dataset_path=str(data), tool_format="hermes", renderer=lambda m, t: "")

    fenced = '```json\n{"name": "get_weather", "arguments": {"city": "Lyon"}}\n```'
    tagged = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lyon"}}\n</tool_call>'
    wrong = '```json\n{"name": "get_weather", "arguments": {"city": "Porto"}}\n```'
    jobs = [0, 0, 0, 1, 1, 0]
    answers = [fenced, tagged, wrong, fenced, "I can't tell jokes with these tools.", None]
    strict = []
    env = make_env()
    for index, text in zip(jobs[:5], answers[:5]):
        env.reset(options={"index": index})
        strict.append(env.step(text)[4]["valid"])
    assert strict == [False, True, False, True, True]  # BFCL's verdicts: the fence reads as no call
    assert any_format_verdicts(make_env, "hermes", jobs, answers) == [True, True, False, False, True, None]
