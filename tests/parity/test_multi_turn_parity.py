"""Multi-turn parity with BFCL: ground truth and thousands of perturbed trajectories.

For every trajectory both sides decode the same raw step texts, run the calls on their own
backends and judge them: BFCL with its own decoder, ``eval``-based executor, classes and
checker (in the oracle venv), we with ours. Compared: the verdict and error type, every
decoded call string, every call's result string, and every class's public state after every
turn.
"""

from __future__ import annotations

import random

import pytest

from fcenv.data import load_tasks
from harness.trajectories import ground_truth_steps, perturbed_trajectories
from tests.support.replay import replay

CATEGORIES = ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"]
PERTURBATIONS_PER_ENTRY = 5


def trajectories(bfcl_dir, category):
    rng = random.Random(f"{category}-20261121")
    out = []
    for task in load_tasks(bfcl_dir / f"BFCL_v4_{category}.json"):
        out.append((task, "ground_truth", ground_truth_steps(task)))
        out += [(task, kind, steps) for kind, steps in perturbed_trajectories(task, rng, PERTURBATIONS_PER_ENTRY)]
    return out


@pytest.mark.oracle
@pytest.mark.slow
@pytest.mark.parametrize("category", CATEGORIES)
def test_trajectories_match_bfcl(oracle, bfcl_dir, category):
    cases = trajectories(bfcl_dir, category)
    requests = [
        {
            "op": "multi",
            "entry": {"id": t.id, "initial_config": t.initial_config, "involved_classes": t.involved_classes},
            "ground_truth": t.ground_truth,
            "turns": steps,
        }
        for t, _, steps in cases
    ]
    answers = oracle.run(requests)
    mismatches = []
    for (task, kind, steps), theirs in zip(cases, answers):
        ours = replay(task, steps)
        for key in ("valid", "error_type", "decoded", "results", "states"):
            if ours[key] != theirs[key]:
                mismatches.append((task.id, kind, key, ours[key], theirs[key]))
                break
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ; first: {str(mismatches[0])[:3000]}"

    truth = [(t, a) for (t, kind, _), a in zip(cases, answers) if kind == "ground_truth"]
    assert len(truth) == 200 and all(a["valid"] for _, a in truth)
    invalid = sum(not a["valid"] for a in answers)
    assert len(cases) == 1200 and invalid > 250  # both verdicts well represented
