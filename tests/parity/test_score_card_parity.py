"""fcenv's score card (fcenv/score_card.py) against BFCL's own: the same per-category
accuracies and counts, and the same result lines, go to bfcl_eval's ``record_cost_latency`` and
``generate_leaderboard_csv`` in the oracle venv (driver op "score_card") and to ``score_card``
and ``cost_latency``; every cell of every table (as BFCL's CSV writer receives it, before
formatting, compared exactly) and every CSV file's text must agree: the Model column, link,
organisation and licence from BFCL's registry for a model it lists (fcenv.bfcl_models, itself
held to the registry here), and the cost and latency columns from the lines' ``latency``.

Cases: every category present, some or all missing (BFCL counts those as 0 over their full
size and shows N/A), no entry right, every entry right, live categories of very different
sizes, model names with ``/`` and ``_``, models BFCL lists and models it does not (the
driver's stand-in for those: the name as given, no prices), result lines timed as BFCL's
generation times them (single-turn numbers, multi-turn turns of steps, zeros of failed calls)
and in shapes BFCL leaves out, and a seeded batch of random mixes.
"""

from __future__ import annotations

import random

import pytest

from fcenv.bfcl_models import BFCL_MODELS, bfcl_model
from fcenv.score_card import (CATEGORY_SIZES, NA, CostLatency, cost_latency, csv_files, csv_rows, latencies,
                              score_card)

pytestmark = pytest.mark.oracle

ALL = list(CATEGORY_SIZES)
NOT_AGENTIC = [c for c in ALL if not c.startswith(("memory", "web_search"))]
LIVE_AST = ["live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"]


def _whole(categories, fraction):
    return {c: (int(CATEGORY_SIZES[c] * fraction), CATEGORY_SIZES[c]) for c in categories}


def _random_case(rng: random.Random) -> dict[str, tuple[int, int]]:
    chosen = [c for c in ALL if rng.random() < rng.choice([0.2, 0.5, 0.9])]
    case = {}
    for category in chosen:
        total = rng.choice([1, 2, 3, 7, CATEGORY_SIZES[category], rng.randint(1, 1500)])
        case[category] = (rng.choice([0, total, rng.randint(0, total)]), total)
    return case


def _latency(rng: random.Random):
    """One result line's ``latency``: as BFCL's generation writes it (seconds of a single-turn
    call, a multi-turn entry's turns of step seconds, 0 for a call that failed), or in a shape
    BFCL's cost leaves out; ``...``: the line has no ``latency``."""
    def seconds():
        return round(rng.uniform(0.05, 90), rng.choice([1, 3, 9]))

    # hours of one call: few, but they make the cost dollars, where a wrong price shows in cents
    return rng.choice([
        ..., seconds(), rng.randint(1, 40), 0, 0.0, rng.uniform(3600, 400000),
        [[seconds() for _ in range(rng.randint(1, 4))] for _ in range(rng.randint(1, 4))],
        [[seconds(), 0], [], [0.0, seconds()]],
        [[seconds(), "1.5", None, [2.0], True]], [seconds(), seconds()], "3.2", None, {"s": 1.0}, [],
    ])


def _result_files(rng: random.Random) -> list[list[dict]]:
    """Result files' lines, each with or without a ``latency``. Never exactly one latency that
    counts: BFCL's standard deviation of one fails (test_one_latency_...)."""
    files = []
    for file in range(rng.randint(1, 4)):
        lines = []
        for k in range(rng.randint(1, 12)):
            line = {"id": f"simple_python_{file}_{k}", "result": "[f()]"}
            if (value := _latency(rng)) is not ...:
                line["latency"] = value
            lines.append(line)
        files.append(lines)
    if len(_counted(files)) == 1:
        files[0].append({"id": "simple_python_x", "result": "[f()]", "latency": 1.25})
    return files


def _counted(files: list[list[dict]]) -> list[float]:
    """Our side: the latencies the card counts, over every file's lines."""
    return latencies(line.get("latency") for lines in files for line in lines)


KNOWN = ["Qwen/Qwen3-8B", "Qwen_Qwen3-0.6B-FC", "meta-llama/Llama-3.1-8B-Instruct-FC", "google/gemma-3-1b-it",
         "ibm-granite/granite-4.0-350m", "MadeAgents/Hammer2.1-0.5b", "Salesforce/xLAM-2-1b-fc-r"]
TIMED = [[{"id": "simple_python_0", "result": "[f()]", "latency": 1.75},
          {"id": "simple_python_1", "result": "[f()]", "latency": 0},
          {"id": "simple_python_2", "result": "Error during inference: timed out"}],
         [{"id": "multi_turn_base_0", "result": [["[f()]"], ["[g()]", "done"]], "latency": [[2.5], [0.4, 3.125]]},
          {"id": "multi_turn_base_1", "result": [["x"]], "latency": [[3600.0]]}]]

CASES: list[tuple[str, str, dict[str, tuple[int, int]]]] = [
    ("every category, BFCL's sizes", "Qwen/Qwen2.5-Coder-0.5B-Instruct",
     {c: (CATEGORY_SIZES[c] * (k + 3) // 29, CATEGORY_SIZES[c]) for k, c in enumerate(ALL)}),
    ("all but the agentic categories", "Qwen/Qwen2.5-Coder-0.5B-Instruct", _whole(NOT_AGENTIC, 0.61)),
    ("nothing scored right", "zero-model", {c: (0, CATEGORY_SIZES[c]) for c in ALL}),
    ("everything right", "perfect", {c: (CATEGORY_SIZES[c], CATEGORY_SIZES[c]) for c in ALL}),
    ("one category", "solo", {"simple_python": (2, 3)}),
    ("non-live only", "my_run", _whole(["simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
                                        "parallel_multiple", "irrelevance"], 0.77)),
    ("live of very different sizes", "org/name_with_underscore",
     {"live_simple": (1, 3), "live_multiple": (700, 1053), "live_parallel": (16, 16), "live_parallel_multiple": (0, 5),
      "live_irrelevance": (3, 884), "live_relevance": (9, 16)}),
    ("one live category, the others missing at their full size", "m", {"live_parallel": (11, 16)}),
    ("no live AST category", "m", {"live_irrelevance": (400, 884), "live_relevance": (15, 16)}),
    ("multi-turn and irrelevance, partial files", "m",
     {"multi_turn_base": (3, 10), "multi_turn_long_context": (0, 4), "irrelevance": (239, 240)}),
    ("agentic only", "m", {"web_search_base": (37, 100), "memory_kv": (12, 155), "memory_rec_sum": (155, 155)}),
    ("nothing scored", "empty", {}),
    ("a model BFCL lists", "Qwen/Qwen3-8B", _whole(NOT_AGENTIC, 0.4)),
    ("BFCL's results folder of a model it lists, FC mode", "meta-llama_Llama-3.1-8B-Instruct-FC",
     {"multi_turn_base": (2, 7)}),
]
_rng = random.Random(20260323)
CASES += [(f"random mix {k}", _rng.choice(KNOWN + [f"model_{k}/v{k}", "Qwen/Qwen2.5-Coder-0.5B-Instruct"]),
           _random_case(_rng)) for k in range(40)]
# name, model, counts, the result files' lines BFCL's cost and latency read (none: N/A)
TIMED_CASES = [(name, model, counts, []) for name, model, counts in CASES[:-40]]
TIMED_CASES += [
    ("timed lines of a model BFCL lists", "Qwen/Qwen3-8B", _whole(NOT_AGENTIC, 0.5), TIMED),
    ("timed lines of a model BFCL does not list", "my_run", {"multi_turn_base": (1, 2)}, TIMED),
    ("lines without a latency that counts", "Qwen/Qwen3-8B", {"simple_python": (1, 3)},
     [[{"id": "a", "result": "", "latency": 0}, {"id": "b", "result": "", "latency": "2.0"}, {"id": "c", "result": ""}]]),
]
TIMED_CASES += [(name, model, counts, _result_files(_rng) if k % 4 else []) for k, (name, model, counts)
                in enumerate(CASES[-40:])]


def _request(model, counts, results=()):
    return {"op": "score_card", "model": model, "results": list(results),
            "scores": {c: {"accuracy": correct / total, "total_count": total} for c, (correct, total) in counts.items()}}


def test_category_sizes_are_bfcls(oracle):
    """What a category not scored counts as in the live average: BFCL's entry counts."""
    sizes, = oracle.run([{"op": "category_sizes"}])
    assert sizes == CATEGORY_SIZES


def test_the_model_table_is_bfcls_registry(oracle):
    """Every model fcenv.bfcl_models lists is in BFCL's registry with the same display name,
    link, organisation and licence, served locally (no token prices: BFCL's cost for it is the
    latency-based one fcenv computes); and it lists every model BFCL serves locally."""
    registry, = oracle.run([{"op": "model_registry"}])
    local = {name for name, entry in registry.items() if entry["map"] == "local_inference_model_map"}
    assert set(BFCL_MODELS) == local
    for name, ours in BFCL_MODELS.items():
        entry = registry[name]
        assert (ours.display_name, ours.url, ours.org, ours.license) == \
            (entry["display_name"], entry["url"], entry["org"], entry["license"]), name
        assert entry["input_price"] is None and entry["output_price"] is None, name
    assert BFCL_MODELS["Qwen/Qwen3-8B"].display_name == "Qwen3-8B (Prompt)"
    assert BFCL_MODELS["Qwen/Qwen3-8B-FC"].display_name == "Qwen3-8B (FC)"
    # fcenv card's real model is not one BFCL lists, by its hub name or by fcenv's name for it
    for name in ("Qwen/Qwen2.5-Coder-0.5B-Instruct", "qwen2.5-coder-0.5b-instruct"):
        assert name not in registry and bfcl_model(name) is None


def test_the_score_card_matches_bfcls_numbers_and_csv_files(oracle):
    answers = oracle.run([_request(model, counts, results) for _, model, counts, results in TIMED_CASES])
    assert {reference["known"] for reference in answers} == {True, False}
    checked = timed = costly = 0
    for (name, model, counts, results), reference in zip(TIMED_CASES, answers):
        assert reference["known"] == (bfcl_model(model) is not None), name
        card = score_card(counts)
        timing = cost_latency(_counted(results))
        timed += timing.mean != NA
        costly += timing.cost != NA and timing.cost > 1
        ours = csv_rows(card, model, timing=timing)
        assert set(ours) == set(reference["rows"]) == set(reference["csv"]), name
        for file, (header, row) in ours.items():
            ref_header, ref_row = reference["rows"][file]
            assert header == ref_header, (name, file)
            assert len(row) == len(ref_row), (name, file)
            for column, mine, theirs in zip(header, row, ref_row):
                # exact: the same float (not merely the same two decimals), or the same string
                assert (isinstance(mine, str), mine) == (isinstance(theirs, str), theirs), (name, file, column)
                checked += 1
        assert csv_files(card, model, timing=timing) == reference["csv"], name
    assert checked > 4000 and timed > 15 and costly > 5


def test_an_empty_category_is_refused_as_bfcl_cannot_record_one(oracle):
    """BFCL's accuracy divides by the entries (save_eval_results); ours refuses a category
    with none rather than invent an accuracy for it."""
    reference, = oracle.run([{"op": "score_empty", "category": "live_simple"}])
    assert reference == {"raised": "ZeroDivisionError"}
    with pytest.raises(ValueError, match="live_simple: 0 correct of 0 entries"):
        score_card({"live_simple": (0, 0), "live_multiple": (3, 4)})


def test_one_latency_bfcl_stops_and_the_card_shows_no_deviation(oracle):
    """BFCL's standard deviation of one latency raises (statistics.stdev), which ends its
    evaluation; fcenv's card shows that cell "N/A" and the others as BFCL computes them."""
    with pytest.raises(RuntimeError, match="StatisticsError"):
        oracle.run([_request("Qwen/Qwen3-8B", {"simple_python": (1, 2)},
                             [[{"id": "simple_python_0", "result": "", "latency": 720000.0}]])])
    # 200 hours at $23.92 shared by 100 requests
    assert cost_latency(latencies([720000.0])) == CostLatency(cost=47.84, mean=720000.0, std=NA, p95=720000.0)
