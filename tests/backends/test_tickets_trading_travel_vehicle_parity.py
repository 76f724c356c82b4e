"""Differential tests: group-b backends (TicketAPI, TradingBot, TravelAPI, VehicleControlAPI)
against BFCL's own classes, run in the oracle venv.

(a) Ground-truth replay: every entry of the four multi-turn categories that involves a
    group-b class, its ground-truth calls routed as BFCL routes them, turn by turn, with
    long_context for multi_turn_long_context; result strings and public state after each
    turn must be equal.
(b) Perturbed calls: 4,800 generated calls per class (160 sequences of 30), from random
    scenarios of the data, some with odd or wrong-typed fields, with and without
    long_context; every result string and the final state equal. Messages in which the
    reference prints a set are compared with their items sorted (see normalize_result).
"""

from __future__ import annotations

import json
import random

import pytest

from tests.support.backend_differential import execute_request, run_ours
from tests.support.tickets_trading_travel_vehicle_calls import (
    CATEGORIES,
    GROUP_B,
    group_b_turns,
    load_docs,
    load_entries,
    normalize_result,
    scenarios,
)
from tests.support.tickets_trading_travel_vehicle_sequences import (
    generate_sequence,
    varied_scenario,
)

pytestmark = pytest.mark.oracle

SEQUENCES_PER_CLASS = 160
CALLS_PER_SEQUENCE = 30


def _same(ours: dict, theirs: dict) -> list[str]:
    """Differences between our run and the oracle's, as readable lines (empty when equal)."""
    problems = []
    ours_results = [normalize_result(r) for r in ours["results"]]
    theirs_results = [normalize_result(r) for r in theirs["results"]]
    for index, (mine, ref) in enumerate(zip(ours_results, theirs_results)):
        if mine != ref:
            problems.append(f"result {index}: ours {mine[:300]!r} != reference {ref[:300]!r}")
    if len(ours_results) != len(theirs_results):
        problems.append(f"{len(ours_results)} results != {len(theirs_results)}")
    # Both sides' states are in the same canonical JSON form (NaN stays a tag, so == works).
    ours_state = json.loads(json.dumps(ours["states"]))
    theirs_state = theirs["states"]
    for name in sorted(set(ours_state) | set(theirs_state)):
        mine, ref = ours_state.get(name), theirs_state.get(name)
        if mine != ref:
            mine, ref = mine or {}, ref or {}
            differing = [k for k in sorted(set(mine) | set(ref)) if mine.get(k) != ref.get(k)]
            ours_part = str({k: mine.get(k) for k in differing})[:400]
            ref_part = str({k: ref.get(k) for k in differing})[:400]
            problems.append(
                f"state of {name} differs in {differing}: ours {ours_part} reference {ref_part}"
            )
    return problems


def ground_truth_runs(bfcl_dir) -> list[tuple[str, dict]]:
    """(label, run) per turn prefix of every group-b entry; run = execute_request kwargs."""
    runs = []
    for category in CATEGORIES:
        long_context = category == "multi_turn_long_context"
        for entry in load_entries(bfcl_dir, category):
            classes, turns = group_b_turns(bfcl_dir, entry)
            if not classes:
                continue
            calls: list[dict] = []
            for turn_index, turn in enumerate(turns):
                calls = calls + turn
                run = {
                    "involved_classes": classes,
                    "initial_config": entry["initial_config"],
                    "calls": calls,
                    "long_context": long_context,
                }
                runs.append((f"{entry['id']} turn {turn_index}", run))
    return runs


def perturbed_runs(bfcl_dir, class_name: str, seed: int) -> list[tuple[str, dict]]:
    rng = random.Random(seed)
    docs = load_docs(bfcl_dir, class_name)
    configs = scenarios(bfcl_dir, class_name)
    runs = []
    for index in range(SEQUENCES_PER_CLASS):
        config = varied_scenario(class_name, rng.choice(configs + [{}]), rng)
        long_context = rng.random() < 0.35
        calls = generate_sequence(class_name, docs, config, long_context, CALLS_PER_SEQUENCE, rng)
        run = {
            "involved_classes": [class_name],
            "initial_config": {class_name: config},
            "calls": calls,
            "long_context": long_context,
        }
        runs.append(
            (f"{class_name} sequence {index} (seed {seed}, long_context={long_context})", run)
        )
    return runs


def mismatches(oracle, runs: list[tuple[str, dict]]) -> list[str]:
    answers = oracle.run([execute_request(**run) for _, run in runs])
    problems = []
    for (label, run), answer in zip(runs, answers):
        for problem in _same(run_ours(**run), answer):
            problems.append(f"{label}: {problem}")
    return problems


def test_ground_truth_replay_matches_reference(oracle, bfcl_dir):
    runs = ground_truth_runs(bfcl_dir)
    assert len(runs) > 2000
    problems = mismatches(oracle, runs)
    assert not problems, f"{len(problems)} differences, first ones:\n" + "\n".join(problems[:20])


@pytest.mark.parametrize("class_name", GROUP_B)
def test_perturbed_calls_match_reference(oracle, bfcl_dir, class_name):
    runs = perturbed_runs(bfcl_dir, class_name, seed=GROUP_B.index(class_name) + 1)
    assert sum(len(run["calls"]) for _, run in runs) >= 3000
    problems = mismatches(oracle, runs)
    assert not problems, f"{len(problems)} differences, first ones:\n" + "\n".join(problems[:20])
