"""The held-out client under BFCL's prompt variations (``bench/heldout.py --prompt_variations``):
a run's actor is asked each entry under each of the 26 format-sensitivity configurations, and its
verdicts and spread are the ones ``fcenv evaluate`` gives the same answers as BFCL's
format-sensitivity set (whose scoring is checked against BFCL's runner in tests/parity)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("peft")
from fcenv.format_sensitivity import load_set, sensitivity
from fcenv.prompt_variations import format_sensitivity_configs
from tests.support.runs import SCRIPT, tiny_flags

ROOT = Path(__file__).resolve().parents[2]


WEATHER = {"name": "get_weather", "description": "Weather in a city.",
           "parameters": {"type": "dict", "properties": {"city": {"type": "string", "description": "City."}},
                          "required": ["city"]}}


def write_set(folder: Path) -> tuple[Path, Path]:
    """Two simple_python entries as BFCL lays them out, and a format-sensitivity id file listing both."""
    questions = [{"id": f"simple_python_{i}", "question": [[{"role": "user", "content": f"Weather in {city}?"}]],
                  "function": [WEATHER]} for i, city in enumerate(("Lyon", "Porto"))]
    answers = [{"id": f"simple_python_{i}", "ground_truth": [{"get_weather": {"city": [city]}}]}
               for i, city in enumerate(("Lyon", "Porto"))]
    (folder / "possible_answer").mkdir(parents=True)
    data = folder / "BFCL_v4_simple_python.json"
    data.write_text("".join(json.dumps(q) + "\n" for q in questions))
    (folder / "possible_answer" / data.name).write_text("".join(json.dumps(a) + "\n" for a in answers))
    id_file = folder / "BFCL_v4_format_sensitivity.json"
    id_file.write_text(json.dumps({"simple_python": ["simple_python_0", "simple_python_1"]}))
    return data, id_file


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def run_dir(tiny_model, tmp_path_factory) -> Path:
    """A short run of the tiny model: its actor is what the client asks."""
    runs = tmp_path_factory.mktemp("runs")
    trained = run(str(SCRIPT), *tiny_flags(tiny_model, runs), "--experiment_name", "v", "--eval_interval", "0")
    assert trained.returncode == 0, trained.stderr[-3000:]
    return next((runs / "v").glob("*/*/*/run1"))


def test_the_client_scores_each_variation_as_the_format_sensitivity_set(run_dir, tmp_path):
    data, id_file = write_set(tmp_path / "bfcl")

    client = run("-m", "bench.heldout", str(run_dir), "--dataset_path", str(data), "--prompt_variations", "--samples", "0",
                 "--checkpoints", "last", "--out", str(tmp_path / "report.json"),
                 "--answers", str(tmp_path / "answers.jsonl"))
    assert client.returncode == 0, client.stderr[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())["reports"][-1]
    assert list(report["greedy_by_config"]) == format_sensitivity_configs()
    assert all(total == 2 for _, total in report["greedy_by_config"].values())
    answers = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert len(answers) == 26 * 2 and {a["prompt_variation"] for a in answers} == set(format_sensitivity_configs())

    # The same answers, kept under the set's ids, scored by fcenv evaluate as BFCL scores the set.
    set_ids = {(entry.config, entry.task.id): entry.id for entry in load_set(id_file)}
    results = tmp_path / "BFCL_v4_format_sensitivity_result.json"
    results.write_text("".join(json.dumps({"id": set_ids[(a["prompt_variation"], a["id"])], "result": a["answer"]})
                               + "\n" for a in answers))
    scored = run("-m", "fcenv", "evaluate", "--dataset_path", str(id_file), "--results", str(results),
                 "--out", str(tmp_path / "verdicts.jsonl"))
    assert scored.returncode == 0, scored.stderr[-3000:]
    verdicts = {v["id"]: v for v in map(json.loads, (tmp_path / "verdicts.jsonl").read_text().splitlines())}
    assert {set_ids[(a["prompt_variation"], a["id"])]: a["valid"] for a in answers} == \
        {set_id: v["valid"] for set_id, v in verdicts.items()}
    figures = sensitivity((v["config"], v["valid"]) for v in verdicts.values())
    assert (report["greedy_accuracy"], report["greedy_max_delta"], report["greedy_std"]) == \
        (figures.accuracy, figures.max_delta, figures.std)
    assert report["greedy_by_config"] == {config: list(counts) for config, counts in figures.by_config.items()}


def test_entries_no_variation_reaches_are_refused_before_work(run_dir, tmp_path):
    # BFCL varies the prompt of single-turn Python entries only: a Java entry would be asked under
    # the default prompt in all 26 configurations, and its verdicts would flatten the spread.
    data, _ = write_set(tmp_path / "bfcl")
    java = {"id": "simple_java_0", "question": [[{"role": "user", "content": "Weather in Lyon?"}]],
            "function": [WEATHER]}
    with data.open("a") as out:
        out.write(json.dumps(java) + "\n")
    with (data.parent / "possible_answer" / data.name).open("a") as out:
        out.write(json.dumps({"id": "simple_java_0", "ground_truth": [{"get_weather": {"city": ["Lyon"]}}]}) + "\n")

    client = run("-m", "bench.heldout", str(run_dir), "--dataset_path", str(data), "--prompt_variations", "--samples", "0",
                 "--checkpoints", "last", "--out", str(tmp_path / "report.json"))
    assert client.returncode == 2
    assert str(data) in client.stderr and "simple_java_0" in client.stderr and "--prompt_variations" in client.stderr
    assert not (tmp_path / "report.json").exists()
