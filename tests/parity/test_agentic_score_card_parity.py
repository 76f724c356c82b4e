"""The memory and web-search categories on the score card, end to end: result files for BFCL's
memory (and web-search) entries -> ``fcenv evaluate --score_dir`` -> the card's memory, web
search and agentic cells, against BFCL's own computation through the oracle (its
``agentic_runner`` over the same result lines for each category's accuracy, then its
``generate_leaderboard_csv`` on those accuracies for the CSV files).

The answers are a seeded mix: right and wrong final answers, a call step before the answer,
only calls (no final answer), a result that is not one turn of steps.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from fcenv.data import load_tasks

pytestmark = pytest.mark.oracle
ROOT = Path(__file__).resolve().parents[2]


def _answer(task, rng: random.Random):
    right = f"{{'answer': '{task.ground_truth[0]}', 'context': 'remembered'}}"
    choice = rng.randrange(6)
    if choice == 0:
        return [["I do not know"]]
    if choice == 1:
        return [["[core_memory_retrieve_all()]", right]]
    if choice == 2:
        return [["[core_memory_retrieve_all()]"]]  # only calls: no final answer
    if choice == 3:
        return "Error during inference: the server went away"
    return [[right]]


def _results(tasks, path: Path, seed: int) -> list[dict]:
    rng = random.Random(seed)
    lines = [{"id": task.id, "result": _answer(task, rng)} for task in tasks]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return lines


def test_evaluate_s_card_holds_bfcl_s_memory_and_web_search_scores(oracle, bfcl_dir, tmp_path):
    files = [bfcl_dir / "BFCL_v4_memory.json", bfcl_dir / "BFCL_v4_web_search.json"]
    task_sets = [load_tasks(file) for file in files]
    result_files = [tmp_path / f"result_{k}.json" for k in range(len(files))]
    lines = [_results(tasks, path, seed) for seed, (tasks, path) in enumerate(zip(task_sets, result_files))]
    score = tmp_path / "score"
    proc = subprocess.run([sys.executable, "-m", "fcenv", "evaluate", "--dataset_path", *map(str, files), "--results",
                           *map(str, result_files), "--out", str(tmp_path / "verdicts.jsonl"), "--score_dir",
                           str(score), "--model_name", "org/agent-model"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    requests, categories = [], []
    for tasks, result_lines in zip(task_sets, lines):
        for category in dict.fromkeys(task.category for task in tasks):
            mine = [(task, line) for task, line in zip(tasks, result_lines) if task.category == category]
            requests.append({"op": "agentic_scores", "category": category, "results": [line for _, line in mine],
                             "answers": [task.ground_truth for task, _ in mine]})
            categories.append(category)
    assert categories == ["memory_kv", "memory_vector", "memory_rec_sum", "web_search_base", "web_search_no_snippet"]
    scores = dict(zip(categories, oracle.run(requests)))
    assert all(0 < s["accuracy"] < 1 for s in scores.values()), scores  # the mix has both verdicts everywhere
    reference, = oracle.run([{"op": "score_card", "model": "org/agent-model", "scores": scores}])
    for name, text in reference["csv"].items():
        assert (score / name).read_text() == text, name
    agentic = dict(zip(*[row.split(",") for row in (score / "data_agentic.csv").read_text().splitlines()]))
    assert "N/A" not in [agentic[k] for k in ("Agentic Overall Acc", "Web Search Summary", "Memory Summary", "Memory KV")]
    assert "Memory" in proc.stdout and "fcenv cannot score yet" not in proc.stdout
