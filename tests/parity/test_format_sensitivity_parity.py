"""``fcenv evaluate`` on BFCL's format-sensitivity set against BFCL's own runner.

One result file in BFCL's layout (``<results>/<model>/format_sensitivity/
BFCL_v4_format_sensitivity_result.json``, ids ``format_sensitivity_<n>:<config>:<entry id>``)
answers all 5200 questions: right answers in the configuration's format, wrong ones, and
answers in another format, in proportions that differ by configuration. The same file goes to
``fcenv evaluate --score_dir`` and to bfcl-eval's ``evaluate_task`` in the oracle venv; every
verdict, every figure of the score file's header (accuracy, max delta, variance, standard
deviation, each configuration's counts) and the text of ``data_format_sensitivity.csv`` and
``data_overall.csv`` (via BFCL's ``generate_leaderboard_csv``) must agree.
"""

from __future__ import annotations

import json
import random

import pytest

from fcenv.cli import main
from fcenv.format_sensitivity import load_set
from fcenv.prompt_variations import PromptVariation, format_sensitivity_configs
from harness.format_answers import render_answer
from harness.generators import answer_calls, mutate

pytestmark = pytest.mark.oracle

MODEL = "Org/Model-v1"  # its folder Org_Model-v1 reads back as this name


def _answers(bfcl_dir) -> list[dict]:
    """One answer per question; configuration k gets it right about (k + 4) / 30 of the time."""
    rng = random.Random(3604)
    configs = format_sensitivity_configs()
    lines = []
    for entry in load_set(bfcl_dir / "BFCL_v4_format_sensitivity.json"):
        calls = answer_calls(entry.task, rng, omit=rng.random() < 0.5)
        roll = rng.random() * 30
        if roll < configs.index(entry.config) + 4:
            text = render_answer(calls, entry.variation)
        elif roll < 24:
            text = render_answer(mutate(entry.task, calls, rng)[1], entry.variation)
        else:
            text = render_answer(calls, PromptVariation(rng.choice(["python", "json", "concise_xml"])))
        lines.append({"id": entry.id, "result": text})
    rng.shuffle(lines)  # BFCL's runner sorts by id; fcenv reads any order
    return lines


def test_scores_and_score_files_match_bfcls_runner(oracle, bfcl_dir, tmp_path, capsys):
    folder = tmp_path / "result" / MODEL.replace("/", "_") / "format_sensitivity"
    folder.mkdir(parents=True)
    results = folder / "BFCL_v4_format_sensitivity_result.json"
    results.write_text("".join(json.dumps(line) + "\n" for line in _answers(bfcl_dir)))
    verdicts, score_dir = tmp_path / "verdicts.jsonl", tmp_path / "score"

    status = main(["evaluate", "--dataset_path", str(bfcl_dir / "BFCL_v4_format_sensitivity.json"),
                   "--results", str(results), "--out", str(verdicts), "--score_dir", str(score_dir)])
    printed = capsys.readouterr().out
    assert status == 0
    reference, = oracle.run([{"op": "format_sensitivity", "results": str(results), "model": MODEL}])
    header = reference["header"]

    ours = [json.loads(line) for line in verdicts.read_text().splitlines()]
    assert len(ours) == header["total_count"] == 5200
    failed = {v["id"]: v["error_type"] for v in ours if not v["valid"]}
    assert failed == reference["failed"]
    assert sum(v["valid"] for v in ours) == header["correct_count"]

    configs = format_sensitivity_configs()
    assert {c: (header[c]["correct_count"], header[c]["total_count"]) for c in configs} == {
        c: (sum(v["valid"] for v in ours if v["config"] == c), sum(v["config"] == c for v in ours)) for c in configs}
    accuracies = sorted(header[c]["accuracy"] for c in configs)
    assert accuracies[-1] - accuracies[0] > 0.2  # the spread measured is a real one
    figures = f"max delta {header['accuracy_max_delta']} points, standard deviation {header['accuracy_std']} points"
    assert figures in printed and f"(variance {header['accuracy_variance']})" in printed

    cards, = oracle.run([{"op": "score_card", "model": MODEL, "scores": {"format_sensitivity": header}}])
    for name in ("data_format_sensitivity.csv", "data_overall.csv"):
        assert (score_dir / name).read_text() == cards["csv"][name], name
