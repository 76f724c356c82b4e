"""The varied splits (datasets/varied/make_varied.py) are sound training data for a pretrained
model: every task's own ground truth, written as a model of the family writes calls, gets BFCL's
valid verdict; irrelevance tasks pass with no call and fail with one; and none copies BFCL's
test set."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

from fcenv.bundled import BUNDLED
from fcenv.env import FunctionCallingEnv
from fcenv.tool_formats import write_hermes
from fcenv.handlers import Call

ROOT = Path(__file__).resolve().parents[2]


def verdict(env: FunctionCallingEnv, index: int, text: str) -> bool:
    env.reset(options={"index": index})
    return env.step(text)[4]["valid"]


def test_each_tasks_ground_truth_passes_and_irrelevance_wants_no_call():
    env = FunctionCallingEnv(BUNDLED["varied_eval"], tool_format="hermes", renderer=lambda messages, tools: "")
    passed = Counter()
    for index, task in enumerate(env.tasks):
        if task.category == "irrelevance":
            assert verdict(env, index, "None of these functions can do that.")
            name = task.functions[0]["name"]
            assert not verdict(env, index, write_hermes([Call(name, {})]))
        else:
            calls = [Call(name, {k: v[0] for k, v in args.items() if v[0] != ""})
                     for call in task.ground_truth for name, args in call.items()]
            assert verdict(env, index, write_hermes(calls)), task.id
        passed[task.category] += 1
    assert passed == Counter(simple_python=45, multiple=45, parallel=27, parallel_multiple=27, irrelevance=56)


def test_no_task_copies_bfcls_test_set(bfcl_dir):
    result = subprocess.run([sys.executable, "-m", "fcenv", "data", "check", "varied_train", "varied_eval",
                             "--bfcl_dir", str(bfcl_dir)], cwd=ROOT, capture_output=True, text=True, timeout=600,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("0 of the") == 2
